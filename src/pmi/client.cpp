#include "pmi/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "pmi/wire.h"

namespace gantry::pmi {
namespace {

// The limits MPICH's client falls back to clamping when the announced ones
// would not fit a put in one line (simple_pmi.c, PMI_Init).
constexpr int kKeyMaxWhenClamped = 256;
constexpr int kLineSlack = 30;

Error system_error(std::string message, int error) {
    return Error::system("pmi", std::move(message) + ": " + std::strerror(error));
}

// `text` as a decimal int, or an error naming the variable.
Result<int> int_of_variable(const char* name, std::string_view text) {
    if (auto n = parse_int(text))
        return *n;
    return Error("pmi", std::string(name) + "=" + quote(text) + " is not a number");
}

bool is_control(char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// The first of `text`'s bytes that is a control byte or `separator` (the
// wire's: a space in PMI-1, ';' in PMI-2).
std::optional<char> bad_byte(std::string_view text, char separator) {
    for (const char c : text)
        if (c == separator || is_control(c))
            return c;
    return std::nullopt;
}

std::string byte_name(char c) {
    if (c == ' ')
        return "a space";
    if (c == '=')
        return "'='";
    if (c == ';')
        return "';'";
    return "a control byte";
}

Result<int> connect_to_port(std::string_view port_variable) {
    const std::size_t colon = port_variable.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == port_variable.size())
        return Error("pmi", "PMI_PORT=" + quote(port_variable) + " is not host:port");
    const std::string host(port_variable.substr(0, colon));
    const std::string port(port_variable.substr(colon + 1));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* addresses = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &addresses); rc != 0)
        return Error("pmi", "PMI_PORT=" + quote(port_variable) + ": " + ::gai_strerror(rc));
    int error = 0;
    int fd = -1;
    for (const addrinfo* a = addresses; a != nullptr && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        int rc = 0;
        do
            rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        while (rc != 0 && errno == EINTR);
        if (rc != 0) {
            error = errno;
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(addresses);
    if (fd < 0)
        return system_error("cannot connect to PMI_PORT=" + quote(port_variable), error);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// PMI_RANK and PMI_SIZE, MPICH's defaults 0 and 1 when unset.
Result<std::pair<int, int>> rank_and_size(const Client::Environment& environment) {
    int rank = 0;
    int size = 1;
    if (auto text = environment("PMI_RANK")) {
        auto n = int_of_variable("PMI_RANK", *text);
        if (!n)
            return n.error();
        rank = *n;
    }
    if (auto text = environment("PMI_SIZE")) {
        auto n = int_of_variable("PMI_SIZE", *text);
        if (!n)
            return n.error();
        size = *n;
    }
    if (size < 1)
        return Error("pmi", "PMI_SIZE=" + std::to_string(size) + " is not a job size");
    if (rank < 0 || rank >= size)
        return Error("pmi", "PMI_RANK=" + std::to_string(rank) + " is not a rank of a job of " +
                                std::to_string(size));
    return std::pair{rank, size};
}

// What the reply's rc= and msg= say when rc= is there and not 0.
std::optional<std::string> refusal(const Request& reply) {
    const auto rc = reply.find("rc");
    if (!rc || *rc == "0")
        return std::nullopt;
    std::string why = "rc=" + std::string(*rc);
    if (const auto msg = reply.find("msg"))
        why += " msg=" + std::string(*msg);
    return why;
}

Status check_rc(std::string_view command, const Request& reply) {
    if (auto why = refusal(reply))
        return Error("pmi", std::string(command) + " refused by the launcher: " + *why);
    return {};
}

// A reply's error, or success: for the requests whose reply says nothing
// more than that they were done.
template <class Reply>
Status succeeded(const Result<Reply>& reply) {
    if (!reply)
        return reply.error();
    return {};
}

// The int value of `key` in a PMI-2 reply, or an error naming the request.
Result<int> int_in(std::string_view command, const Pmi2Command& reply, std::string_view key) {
    const auto text = reply.find(key);
    const auto n = text ? parse_int(*text) : std::nullopt;
    if (!n)
        return Error::in(
            "pmi",
            "reply to " + std::string(command) + " without a numeric " + std::string(key) + "=",
            reply.body());
    return *n;
}

// The PMI-2 job id as fullinit and kvs-get carry it.
Status check_jobid(std::string_view jobid) {
    if (jobid.empty())
        return Error("pmi", "PMI_JOBID is empty");
    if (jobid.size() > kPmi2ValueMax || bad_byte(jobid, ';'))
        return Error("pmi", "PMI_JOBID=" + quote(jobid) + " is not a job id");
    return {};
}

}  // namespace

Result<std::optional<Client>> Client::from_environment() {
    return from_environment([](const char* name) -> std::optional<std::string> {
        if (const char* value = std::getenv(name))
            return std::string(value);
        return std::nullopt;
    });
}

Result<std::optional<Client>> Client::from_environment(const Environment& environment) {
    if (auto fd_text = environment("PMI_FD")) {
        auto fd = int_of_variable("PMI_FD", *fd_text);
        if (!fd)
            return fd.error();
        if (*fd < 0)
            return Error("pmi", "PMI_FD=" + std::to_string(*fd) + " is not a file descriptor");
        const int flags = ::fcntl(*fd, F_GETFD);
        if (flags < 0)
            return system_error("PMI_FD=" + std::to_string(*fd), errno);
        auto rank_size = rank_and_size(environment);
        if (!rank_size)
            return rank_size.error();
        // PMI_JOBID: Slurm's mpi/pmi2 plugin, which serves PMI-2 (client.h).
        const auto jobid = environment("PMI_JOBID");
        if (jobid)
            if (auto good = check_jobid(*jobid); !good)
                return good.error();
        ::fcntl(*fd, F_SETFD, flags | FD_CLOEXEC);
        auto client = jobid ? connect_fd_pmi2(*fd, *jobid, rank_size->first)
                            : connect_fd(*fd, rank_size->first, rank_size->second);
        if (!client)
            return client.error();
        return std::optional<Client>(std::move(*client));
    }
    auto port = environment("PMI_PORT");
    if (!port)
        return std::optional<Client>();
    const auto pmi_id = environment("PMI_ID");
    std::pair<int, int> rank_size{0, 1};
    if (pmi_id) {
        if (auto id = int_of_variable("PMI_ID", *pmi_id); !id)
            return id.error();
    } else {
        auto from_variables = rank_and_size(environment);
        if (!from_variables)
            return from_variables.error();
        rank_size = *from_variables;
    }
    auto fd = connect_to_port(*port);
    if (!fd)
        return fd.error();
    Client client(*fd, rank_size.first, rank_size.second, Wire::kPmi1);
    if (pmi_id)
        if (auto done = client.initack(*pmi_id); !done)
            return done.error();
    if (auto done = client.handshake(); !done)
        return done.error();
    return std::optional<Client>(std::move(client));
}

Result<Client> Client::connect_fd(int fd, int rank, int size) {
    Client client(fd, rank, size, Wire::kPmi1);
    if (fd < 0)
        return Error("pmi", "connect_fd: " + std::to_string(fd) + " is not a file descriptor");
    if (auto done = client.handshake(); !done)
        return done.error();
    return client;
}

Result<Client> Client::connect_fd_pmi2(int fd, std::string_view jobid, int rank) {
    Client client(fd, rank, 1, Wire::kPmi2);
    if (fd < 0)
        return Error("pmi", "connect_fd_pmi2: " + std::to_string(fd) + " is not a file descriptor");
    if (auto good = check_jobid(jobid); !good)
        return good.error();
    if (auto done = client.handshake_pmi2(jobid, rank); !done)
        return done.error();
    return client;
}

Client::Client(Client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      rank_(other.rank_),
      size_(other.size_),
      wire_(other.wire_),
      appnum_(other.appnum_),
      kvs_name_(std::move(other.kvs_name_)),
      key_max_(other.key_max_),
      value_max_(other.value_max_),
      pending_(std::move(other.pending_)),
      reply_line_(std::move(other.reply_line_)) {}

Client& Client::operator=(Client&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        rank_ = other.rank_;
        size_ = other.size_;
        wire_ = other.wire_;
        appnum_ = other.appnum_;
        kvs_name_ = std::move(other.kvs_name_);
        key_max_ = other.key_max_;
        value_max_ = other.value_max_;
        pending_ = std::move(other.pending_);
        reply_line_ = std::move(other.reply_line_);
    }
    return *this;
}

Client::~Client() {
    close();
}

void Client::close() {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

Status Client::initack(std::string_view pmi_id) {
    if (auto done = send("initack", "cmd=initack pmiid=" + std::string(pmi_id) + "\n"); !done)
        return done;
    if (auto reply = receive("initack", "initack"); !reply)
        return reply.error();
    // Three `cmd=set` lines: size, rank and debug, in this order from hydra.
    std::optional<int> size;
    std::optional<int> rank;
    for (int i = 0; i < 3; ++i) {
        auto reply = receive("initack", "set");
        if (!reply)
            return reply.error();
        for (const auto& token : reply->tokens()) {
            if (token.key != "size" && token.key != "rank")
                continue;
            const auto n = parse_int(token.value);
            if (!n || *n < 0)
                return Error::in("pmi", "reply to initack with a bad " + std::string(token.key),
                                 reply_line_);
            (token.key == "size" ? size : rank) = *n;
        }
    }
    if (!size || !rank)
        return Error("pmi", std::string("reply to initack without ") + (size ? "rank" : "size"));
    if (*size < 1 || *rank >= *size)
        return Error("pmi", "initack gave rank " + std::to_string(*rank) + " of a job of " +
                                std::to_string(*size));
    rank_ = *rank;
    size_ = *size;
    return {};
}

Status Client::handshake() {
    {
        auto reply = call("init", "cmd=init pmi_version=1 pmi_subversion=1", "response_to_init");
        if (!reply)
            return reply.error();
        if (auto done = check_rc("init", *reply); !done)
            return done;
    }
    {
        auto reply = call("get_maxes", "cmd=get_maxes", "maxes");
        if (!reply)
            return reply.error();
        int maxes[3] = {};
        const char* names[3] = {"kvsname_max", "keylen_max", "vallen_max"};
        for (int i = 0; i < 3; ++i) {
            const auto text = reply->find(names[i]);
            if (!text)
                return Error::in("pmi", std::string("reply to get_maxes without ") + names[i] + "=",
                                 reply_line_);
            const auto n = parse_int(*text);
            if (!n || *n <= 0)
                return Error::in(
                    "pmi",
                    std::string("reply to get_maxes: ") + names[i] + " is not a positive number",
                    reply_line_);
            maxes[i] = *n;
        }
        auto [kvsname_max, key_max, value_max] = maxes;
        if (static_cast<long>(kvsname_max) + key_max + value_max + kLineSlack >
            static_cast<long>(kLineMax)) {
            key_max = std::min(key_max, kKeyMaxWhenClamped);
            value_max = static_cast<int>(kLineMax) - kvsname_max - key_max - kLineSlack;
        }
        if (value_max <= 0)
            return Error::in("pmi", "reply to get_maxes leaves no room for a value", reply_line_);
        key_max_ = static_cast<std::size_t>(key_max);
        value_max_ = static_cast<std::size_t>(value_max);
    }
    {
        auto reply = call("get_appnum", "cmd=get_appnum", "appnum");
        if (!reply)
            return reply.error();
        const auto text = reply->find("appnum");
        const auto n = text ? parse_int(*text) : std::nullopt;
        if (!n)
            return Error::in("pmi", "reply to get_appnum without a numeric appnum=", reply_line_);
        appnum_ = *n;
    }
    {
        auto reply = call("get_my_kvsname", "cmd=get_my_kvsname", "my_kvsname");
        if (!reply)
            return reply.error();
        const auto name = reply->find("kvsname");
        if (!name || name->empty())
            return Error::in("pmi", "reply to get_my_kvsname without a kvsname=", reply_line_);
        kvs_name_ = std::string(*name);
    }
    return {};
}

Status Client::handshake_pmi2(std::string_view jobid, int rank) {
    {
        // Slurm reads this first line alone, in one read, and answers it
        // before it reads anything else.
        auto reply = call("init", "cmd=init pmi_version=2 pmi_subversion=0", "response_to_init");
        if (!reply)
            return reply.error();
        if (auto done = check_rc("init", *reply); !done)
            return done;
    }
    auto reply = call(Pmi2Command("fullinit")
                          .add("pmijobid", jobid)
                          .add("pmirank", std::to_string(rank))
                          .add("threaded", "FALSE"));
    if (!reply)
        return reply.error();
    int values[3] = {};
    const char* names[3] = {"rank", "size", "appnum"};
    for (int i = 0; i < 3; ++i) {
        auto n = int_in("fullinit", *reply, names[i]);
        if (!n)
            return n.error();
        values[i] = *n;
    }
    const auto [reply_rank, reply_size, appnum] = values;
    if (reply_size < 1 || reply_rank < 0 || reply_rank >= reply_size)
        return Error("pmi", "fullinit gave rank " + std::to_string(reply_rank) + " of a job of " +
                                std::to_string(reply_size));
    rank_ = reply_rank;
    size_ = reply_size;
    appnum_ = appnum;
    kvs_name_ = std::string(jobid);
    key_max_ = kPmi2KeyMax;
    value_max_ = kPmi2ValueMax;
    return {};
}

std::optional<char> Client::unsendable(std::string_view text) const {
    return bad_byte(text, wire_ == Wire::kPmi2 ? ';' : ' ');
}

Status Client::check_open(std::string_view command) const {
    if (fd_ < 0)
        return Error("pmi", std::string(command) + " after finalize");
    return {};
}

Status Client::check_key(std::string_view command, std::string_view key) const {
    const std::string what = std::string(command) + ": key " + quote(key);
    if (key.empty())
        return Error("pmi", std::string(command) + ": an empty key");
    if (key.size() > key_max_)
        return Error(
            "pmi", what + " is longer than the launcher's " + std::to_string(key_max_) + " bytes");
    if (key.find('=') != std::string_view::npos)
        return Error("pmi", what + " holds '='");
    if (auto c = unsendable(key))
        return Error("pmi", what + " holds " + byte_name(*c));
    return {};
}

Status Client::put(std::string_view key, std::string_view value) {
    const std::string_view command = name_of("put", "kvs-put");
    if (auto open = check_open(command); !open)
        return open;
    if (auto good = check_key(command, key); !good)
        return good;
    const std::string what = std::string(command) + ": the value of " + quote(key);
    if (value.size() > value_max_)
        return Error("pmi", what + " is " + std::to_string(value.size()) +
                                " bytes, longer than the launcher's " + std::to_string(value_max_));
    if (auto c = unsendable(value))
        return Error("pmi", what + " holds " + byte_name(*c) + ": " + quote(value));
    if (wire_ == Wire::kPmi2)
        return succeeded(call(Pmi2Command(command).add("key", key).add("value", value)));
    std::string line = "cmd=put kvsname=" + kvs_name_ + " key=" + std::string(key) +
                       " value=" + std::string(value);
    if (line.size() + 1 > kLineMax)
        return Error("pmi", "put: " + quote(key) + " and its value do not fit in a line of " +
                                std::to_string(kLineMax) + " bytes");
    auto reply = call("put", line, "put_result");
    if (!reply)
        return reply.error();
    return check_rc("put", *reply);
}

Status Client::barrier() {
    const std::string_view command = name_of("barrier_in", "kvs-fence");
    if (auto open = check_open(command); !open)
        return open;
    if (wire_ == Wire::kPmi2)
        return succeeded(call(Pmi2Command(command)));
    auto reply = call("barrier_in", "cmd=barrier_in", "barrier_out");
    if (!reply)
        return reply.error();
    return check_rc("barrier_in", *reply);
}

Result<std::string> Client::get(std::string_view key) {
    const std::string_view command = name_of("get", "kvs-get");
    if (auto open = check_open(command); !open)
        return open.error();
    if (auto good = check_key(command, key); !good)
        return good.error();
    if (wire_ == Wire::kPmi2) {
        // jobid and srcid as MPICH sends them: this job, any source.
        auto reply =
            call(Pmi2Command(command).add("jobid", kvs_name_).add("srcid", "-1").add("key", key));
        if (!reply)
            return reply.error();
        const auto found = reply->find("found");
        if (found == "FALSE")
            return Error::not_found("pmi", "kvs-get: key " + quote(key) + " not found");
        if (found != "TRUE")
            return Error::in("pmi", "reply to kvs-get without found=TRUE or found=FALSE",
                             reply->body());
        const auto value = reply->find("value");
        if (!value)
            return Error::in("pmi", "reply to kvs-get without value=", reply->body());
        return std::string(*value);
    }
    auto reply =
        call("get", "cmd=get kvsname=" + kvs_name_ + " key=" + std::string(key), "get_result");
    if (!reply)
        return reply.error();
    if (auto why = refusal(*reply))
        return Error::not_found("pmi", "get: key " + quote(key) + " not found (" + *why + ")");
    const auto value = reply->find("value");
    if (!value)
        return Error::in("pmi", "reply to get without value=", reply_line_);
    return std::string(*value);
}

Status Client::finalize() {
    if (auto open = check_open("finalize"); !open)
        return open;
    const Status done = wire_ == Wire::kPmi2
                            ? succeeded(call(Pmi2Command("finalize")))
                            : succeeded(call("finalize", "cmd=finalize", "finalize_ack"));
    if (done)
        ::shutdown(fd_, SHUT_RDWR);
    close();
    return done;
}

Status Client::abort(int code, std::string_view message) {
    if (auto open = check_open("abort"); !open)
        return open;
    std::string text;
    for (const char c : message)
        text += unsendable(std::string_view(&c, 1)) ? '_' : c;
    if (wire_ == Wire::kPmi2) {
        text.resize(std::min(text.size(), kPmi2ValueMax));
        return send("abort",
                    Pmi2Command("abort").add("isworld", "TRUE").add("msg", text).to_wire());
    }
    std::string line = "cmd=abort exitcode=" + std::to_string(code);
    if (!text.empty())
        line += " message=" + text;
    if (line.size() + 1 > kLineMax)
        line.resize(kLineMax - 1);
    return send("abort", line + "\n");
}

Result<Request> Client::call(std::string_view command, const std::string& line,
                             std::string_view reply) {
    if (auto sent = send(command, line + "\n"); !sent)
        return sent.error();
    return receive(command, reply);
}

Result<Pmi2Command> Client::call(const Pmi2Command& request) {
    const std::string bytes = request.to_wire();
    if (bytes.size() > kPmi2LengthSize + kPmi2CommandMax)
        return Error("pmi", std::string(request.name()) + ": a command longer than " +
                                std::to_string(kPmi2CommandMax) + " bytes");
    if (auto sent = send(request.name(), bytes); !sent)
        return sent.error();
    return receive(request);
}

Status Client::send(std::string_view command, std::string_view bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = ::write(fd_, bytes.data() + sent, bytes.size() - sent);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            return Error("pmi", "the launcher closed the connection before " +
                                    std::string(command) + " was sent");
        if (n < 0)
            return system_error("sending " + std::string(command) + " to the launcher", errno);
        sent += static_cast<std::size_t>(n);
    }
    return {};
}

Status Client::read_more(std::string_view command, std::string_view reply) {
    char block[kLineMax];
    for (;;) {
        const ssize_t n = ::read(fd_, block, sizeof block);
        if (n < 0 && errno == EINTR)
            continue;
        if ((n < 0 && errno == ECONNRESET) || n == 0)
            return Error("pmi", "the launcher closed the connection while waiting for " +
                                    std::string(reply));
        if (n < 0)
            return system_error("reading the reply to " + std::string(command), errno);
        pending_.append(block, static_cast<std::size_t>(n));
        return {};
    }
}

Result<Request> Client::receive(std::string_view command, std::string_view reply) {
    std::size_t newline = pending_.find('\n');
    while (newline == std::string::npos && pending_.size() < kLineMax) {
        const std::size_t before = pending_.size();
        if (auto more = read_more(command, reply); !more)
            return more.error();
        if (const auto found = pending_.find('\n', before); found != std::string::npos)
            newline = found;
    }
    if (newline == std::string::npos || newline + 1 > kLineMax)
        return Error("pmi", "the reply to " + std::string(command) + " is longer than " +
                                std::to_string(kLineMax) + " bytes: " + quote(pending_));
    reply_line_ = pending_.substr(0, newline);
    pending_.erase(0, newline + 1);
    auto parsed = Request::parse(reply_line_);
    if (!parsed)
        return Error::at(
            "pmi", "unreadable reply to " + std::string(command) + ": " + parsed.error().message(),
            reply_line_, parsed.error().offset().value_or(0));
    // Like MPICH's client: cmd= may be anywhere in the line.
    if (parsed->find("cmd") != reply)
        return Error("pmi", "expected cmd=" + std::string(reply) + " in reply to " +
                                std::string(command) + ", got " + quote(reply_line_));
    return parsed;
}

Result<Pmi2Command> Client::receive(const Pmi2Command& request) {
    const std::string command(request.name());
    const std::string reply = command + "-response";
    while (pending_.size() < kPmi2LengthSize)
        if (auto more = read_more(command, reply); !more)
            return more.error();
    const auto length = Pmi2Command::parse_length(pending_.substr(0, kPmi2LengthSize));
    if (!length)
        return Error::in("pmi", "unreadable reply to " + command + ": " + length.error().message(),
                         *length.error().input());
    while (pending_.size() < kPmi2LengthSize + *length)
        if (auto more = read_more(command, reply); !more)
            return more.error();
    const std::string body = pending_.substr(kPmi2LengthSize, *length);
    pending_.erase(0, kPmi2LengthSize + *length);
    auto parsed = Pmi2Command::parse(body);
    if (!parsed)
        return Error::at("pmi", "unreadable reply to " + command + ": " + parsed.error().message(),
                         body, parsed.error().offset().value_or(0));
    // Unlike PMI-1, cmd= comes first, and MPICH checks rc= in every reply.
    if (parsed->name() != reply)
        return Error("pmi",
                     "expected cmd=" + reply + " in reply to " + command + ", got " + quote(body));
    auto rc = int_in(command, *parsed, "rc");
    if (!rc)
        return rc.error();
    if (*rc != 0) {
        std::string why = "rc=" + std::to_string(*rc);
        if (const auto message = parsed->find("errmsg"))
            why += " errmsg=" + std::string(*message);
        return Error("pmi", command + " refused by the launcher: " + why);
    }
    return parsed;
}

}  // namespace gantry::pmi
