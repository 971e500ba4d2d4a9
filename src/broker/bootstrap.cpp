#include "broker/bootstrap.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

// Rank 0 of launched brokers: every entry in, then each broker's neighbours out.
Result<Bootstrap::Neighbours> Bootstrap::exchange_launched(const BrokerAddress& own) {
    auto lines = launched_->read_lines(launch_timeout_);
    if (!lines)
        return lines.error();
    std::vector<BrokerAddress> addresses{own};
    std::vector<std::string> seen{""};  // where each host reached this one
    for (std::size_t i = 0; i < lines->size(); ++i) {
        const std::string& line = (*lines)[i];
        const auto space = line.find(' ');
        auto address = parse_address("host " + launched_->host(i), line.substr(0, space));
        if (!address)
            return address.error();
        addresses.push_back(std::move(*address));
        seen.push_back(space == std::string::npos ? "" : line.substr(space + 1));
    }
    // Bound on every interface: each child connects where its ssh
    // connection reached this host, or else to this host's address on the
    // route to it.
    const bool anywhere = own.endpoint.starts_with("tcp://*:");
    for (overlay::Rank rank = 1; rank < tree_.size; ++rank) {
        BrokerAddress parent = addresses[*tree_.parent(rank)];
        if (*tree_.parent(rank) == 0 && anywhere) {
            std::string address = seen[rank];
            if (address.empty()) {
                auto routed = overlay::route_source_address(launched_->host(rank - 1));
                if (!routed)
                    return Error(std::string(kDomain),
                                 routed.error().message() + ": give --overlay-address");
                address = *routed;
            }
            const std::string host =
                address.find(':') != std::string::npos ? "[" + address + "]" : address;
            parent.endpoint = "tcp://" + host + own.endpoint.substr(std::string("tcp://*").size());
        }
        if (const overlay::Rank above = *tree_.parent(rank); parent.endpoint.empty())
            return Error(std::string(kDomain), (above == 0 ? std::string("rank 0")
                                                           : "host " + launched_->host(above - 1)) +
                                                   " published no endpoint for its children");
        std::string text = encode_address(parent) + "\n";
        for (const overlay::Rank child : tree_.children(rank))
            text += encode_address(addresses[child]) + "\n";
        if (auto written = launched_->write(rank - 1, text); !written)
            return written.error();
    }
    launched_->pass_errors_on();
    Neighbours neighbours;
    for (const overlay::Rank child : tree_.children(0))
        neighbours.children.push_back(addresses[child]);
    return neighbours;
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
        return exchange_launched(own);
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
