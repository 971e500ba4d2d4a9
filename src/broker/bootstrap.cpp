#include "broker/bootstrap.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "formats/taskmap.h"
#include "overlay/address.h"

namespace gantry::broker {

namespace {

constexpr std::string_view kDomain = "bootstrap";

std::string entry_key(overlay::Rank rank) {
    return "gantry.broker." + std::to_string(rank);
}

}  // namespace

Result<std::optional<Bootstrap>> Bootstrap::from_pmi(unsigned fanout) {
    auto client = pmi::Client::from_environment();
    if (!client)
        return Error(std::string(kDomain), client.error().str());
    if (!*client || (*client)->size() <= 1)
        return std::optional<Bootstrap>{};
    const overlay::Tree tree{static_cast<overlay::Rank>((*client)->size()), fanout};
    Bootstrap bootstrap(static_cast<overlay::Rank>((*client)->rank()), tree);
    // A launcher that does not say where the tasks are (no mapping, or one
    // too irregular to encode) leaves them on hosts of their own.
    if (auto mapping = (*client)->get("PMI_process_mapping"))
        if (const auto map = TaskMap::parse_pmi(*mapping))
            bootstrap.all_on_one_host_ = map->nnodes() == 1;
    bootstrap.client_ = std::move(**client);
    return std::optional<Bootstrap>(std::move(bootstrap));
}

Result<Bootstrap> Bootstrap::from_config(const overlay::Config& config, std::string_view hostname) {
    auto rank = config.rank_of(hostname);
    if (!rank)
        return rank.error();
    auto certificate = overlay::read_certificate(config.certificate);
    if (!certificate)
        return certificate.error();
    Bootstrap bootstrap(
        *rank, overlay::Tree{static_cast<overlay::Rank>(config.hosts.size()), config.fanout});
    bootstrap.config_ = config;
    bootstrap.certificate_ = std::move(*certificate);
    return bootstrap;
}

Bootstrap Bootstrap::from_stream(int in, int out, overlay::Rank rank, overlay::Rank size,
                                 unsigned fanout, std::string launcher_address) {
    Bootstrap bootstrap(rank, overlay::Tree{size, fanout});
    bootstrap.stream_in_ = in;
    bootstrap.stream_out_ = out;
    bootstrap.launcher_address_ = std::move(launcher_address);
    return bootstrap;
}

Bootstrap Bootstrap::from_launched(std::shared_ptr<overlay::LaunchedHosts> hosts, unsigned fanout,
                                   std::chrono::milliseconds timeout) {
    const auto size = static_cast<overlay::Rank>(hosts->size() + 1);
    Bootstrap bootstrap(0, overlay::Tree{size, fanout});
    bootstrap.launched_ = std::move(hosts);
    bootstrap.launch_timeout_ = timeout;
    return bootstrap;
}

Result<overlay::Certificate> Bootstrap::certificate() const {
    if (certificate_)
        return *certificate_;
    return overlay::make_certificate();
}

std::optional<std::pair<std::string, std::uint16_t>> Bootstrap::bind_address() const {
    if (!config_)
        return std::nullopt;
    // ZeroMQ binds to an address or an interface, not a host name.
    const std::string& address = config_->addresses[rank_];
    unsigned char buffer[sizeof(in6_addr)];
    const bool numeric = ::inet_pton(AF_INET, address.c_str(), buffer) == 1 ||
                         ::inet_pton(AF_INET6, address.c_str(), buffer) == 1;
    return std::pair{numeric ? address : std::string("*"), config_->port};
}

namespace {

Status write_line(int fd, const std::string& line) {
    std::string_view text = line;
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return Error(
                std::string(kDomain),
                std::string("the launcher's stream took no entry: ") + std::strerror(errno));
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

// One line, a byte at a time: what follows on the stream is not ours to take.
Result<std::string> read_line(int fd) {
    std::string line;
    for (;;) {
        char c = 0;
        const ssize_t n = ::read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return Error(std::string(kDomain),
                         "the launcher closed its stream before giving this broker's neighbours");
        if (c == '\n')
            return line;
        line += c;
    }
}

}  // namespace

// Rank 0 of launched brokers: each entry in as it comes, each broker's
// neighbours out as soon as they are all in.
class Bootstrap::LaunchExchange final : public Bootstrap::Exchange {
public:
    LaunchExchange(std::shared_ptr<overlay::LaunchedHosts> hosts, overlay::Tree tree,
                   const BrokerAddress& own, LaunchEvents events)
        : hosts_(std::move(hosts)),
          tree_(tree),
          events_(std::move(events)),
          addresses_(tree.size),
          seen_(tree.size),
          answered_(tree.size, false) {
        addresses_[0] = own;
    }

    void start(asio::io_context& loop, std::chrono::milliseconds timeout) {
        reader_ = hosts_->read_lines(
            loop, timeout,
            {[this](std::size_t index, const std::string& line) { heard(index, line); },
             [this] {
                 if (failed_)
                     return;
                 hosts_->pass_errors_on();
                 events_.done();
             },
             [this](const Error& error) { fail(error); }});
    }

private:
    // Host `index` (rank index + 1) wrote its entry, and where it reached
    // this host after a space when it knows.
    void heard(std::size_t index, const std::string& line) {
        if (failed_)
            return;
        const auto rank = static_cast<overlay::Rank>(index + 1);
        const auto space = line.find(' ');
        auto address = parse_address("host " + hosts_->host(index), line.substr(0, space));
        if (!address) {
            fail(address.error());
            return;
        }
        addresses_[rank] = std::move(*address);
        seen_[rank] = space == std::string::npos ? "" : line.substr(space + 1);
        const overlay::Rank parent = *tree_.parent(rank);
        if (parent == 0) {
            keys_.push_back(addresses_[rank]->public_key);
            events_.authorize(keys_);
        }
        // This one, the parent that may have waited for it, and the children
        // that may have waited for it.
        answer(rank);
        if (parent != 0)
            answer(parent);
        for (const overlay::Rank child : tree_.children(rank))
            answer(child);
    }

    // Writes `rank` its parent's entry, then its children's, once all are in.
    void answer(overlay::Rank rank) {
        if (failed_ || answered_[rank] || !addresses_[rank])
            return;
        const overlay::Rank above = *tree_.parent(rank);
        if (!addresses_[above])
            return;
        for (const overlay::Rank child : tree_.children(rank))
            if (!addresses_[child])
                return;
        auto parent = parent_address(rank);
        if (!parent) {
            fail(parent.error());
            return;
        }
        std::string text = encode_address(*parent) + "\n";
        for (const overlay::Rank child : tree_.children(rank))
            text += encode_address(*addresses_[child]) + "\n";
        if (auto written = hosts_->write(rank - 1, text); !written) {
            fail(written.error());
            return;
        }
        answered_[rank] = true;
    }

    // Where `rank` connects. Rank 0 bound on every interface: where the
    // rank's ssh connection reached this host, or else this host's address
    // on the route to it.
    Result<BrokerAddress> parent_address(overlay::Rank rank) const {
        const overlay::Rank above = *tree_.parent(rank);
        BrokerAddress parent = *addresses_[above];
        const std::string& own_endpoint = addresses_[0]->endpoint;
        if (above == 0 && own_endpoint.starts_with("tcp://*:")) {
            std::string address = seen_[rank];
            if (address.empty()) {
                auto routed = overlay::route_source_address(hosts_->host(rank - 1));
                if (!routed)
                    return Error(std::string(kDomain),
                                 routed.error().message() + ": give --overlay-address");
                address = *routed;
            }
            const std::string host =
                address.find(':') != std::string::npos ? "[" + address + "]" : address;
            parent.endpoint = "tcp://" + host + own_endpoint.substr(std::string("tcp://*").size());
        }
        if (parent.endpoint.empty())
            return Error(std::string(kDomain),
                         (above == 0 ? std::string("rank 0") : "host " + hosts_->host(above - 1)) +
                             " published no endpoint for its children");
        return parent;
    }

    void fail(const Error& error) {
        if (failed_)
            return;
        failed_ = true;
        events_.failed(error);
    }

    std::shared_ptr<overlay::LaunchedHosts> hosts_;
    overlay::Tree tree_;
    LaunchEvents events_;
    std::vector<std::optional<BrokerAddress>> addresses_;  // by rank, as they come
    std::vector<std::string> seen_;  // where each host reached this one, if it knows
    std::vector<bool> answered_;
    std::vector<std::string> keys_;  // of rank 0's children heard from
    bool failed_ = false;
    std::unique_ptr<overlay::LaunchedHosts::LineReader> reader_;  // last: stopped first
};

std::unique_ptr<Bootstrap::Exchange> Bootstrap::exchange_launched(asio::io_context& loop,
                                                                  const BrokerAddress& own,
                                                                  LaunchEvents events) {
    auto exchange = std::make_unique<LaunchExchange>(launched_, tree_, own, std::move(events));
    exchange->start(loop, launch_timeout_);
    return exchange;
}

// A broker a launcher started: its entry out, its neighbours in.
Result<Bootstrap::Neighbours> Bootstrap::exchange_stream(const BrokerAddress& own) {
    const std::string seen = launcher_address_.empty() ? "" : " " + launcher_address_;
    if (auto written = write_line(stream_out_, encode_address(own) + seen + "\n"); !written)
        return written.error();
    const auto next = [&](const std::string& whose) -> Result<BrokerAddress> {
        auto line = read_line(stream_in_);
        if (!line)
            return line.error();
        return parse_address(whose, *line);
    };
    Neighbours neighbours;
    if (const auto parent = tree_.parent(rank_)) {
        auto address = next("rank " + std::to_string(*parent));
        if (!address)
            return address.error();
        neighbours.parent = std::move(*address);
    }
    for (const overlay::Rank child : tree_.children(rank_)) {
        auto address = next("rank " + std::to_string(child));
        if (!address)
            return address.error();
        neighbours.children.push_back(std::move(*address));
    }
    return neighbours;
}

Result<Bootstrap::Neighbours> Bootstrap::exchange(const BrokerAddress& own) {
    if (launched_)
        return Error(std::string(kDomain), "rank 0 of launched brokers exchanges in its loop");
    if (stream_in_ >= 0)
        return exchange_stream(own);
    if (config_) {
        Neighbours neighbours;
        if (const auto parent = tree_.parent(rank_))
            neighbours.parent = BrokerAddress{config_->endpoint(*parent), certificate_->public_key};
        for (const overlay::Rank child : tree_.children(rank_))
            neighbours.children.push_back(
                BrokerAddress{config_->endpoint(child), certificate_->public_key});
        return neighbours;
    }
    const auto fail = [](const Error& error) { return Error(std::string(kDomain), error.str()); };
    if (auto put = client_->put(entry_key(rank()), encode_address(own)); !put)
        return fail(put.error());
    if (auto barrier = client_->barrier(); !barrier)
        return fail(barrier.error());
    const auto read = [&](overlay::Rank rank) -> Result<BrokerAddress> {
        const std::string key = entry_key(rank);
        auto value = client_->get(key);
        if (!value && value.error().kind() == ErrorKind::kNotFound)
            return Error(std::string(kDomain),
                         "no broker published rank " + std::to_string(rank) + "'s address (" + key +
                             "): the launcher gave no task PMI rank " + std::to_string(rank) +
                             " of " + std::to_string(tree_.size));
        if (!value)
            return fail(value.error());
        return parse_address(key, *value);
    };
    Neighbours neighbours;
    if (const auto parent = tree_.parent(rank())) {
        auto address = read(*parent);
        if (!address)
            return address.error();
        if (address->endpoint.empty())
            return Error(std::string(kDomain), "rank " + std::to_string(*parent) +
                                                   " published no endpoint for its children");
        neighbours.parent = std::move(*address);
    }
    for (const overlay::Rank child : tree_.children(rank())) {
        auto address = read(child);
        if (!address)
            return address.error();
        neighbours.children.push_back(std::move(*address));
    }
    if (auto done = client_->finalize(); !done)
        return fail(done.error());
    return neighbours;
}

}  // namespace gantry::broker
