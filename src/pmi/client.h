// A PMI-1 "simple" wire-protocol client, the other end of pmi::Server: what
// a program started by a launcher (gantry run, mpiexec.hydra, srun
// --mpi=pmi2) speaks to learn its rank and the job's size and to exchange
// key-value pairs with the job's other tasks (docs/pmi.md).
//
// Blocking: one request at a time, each waiting for its reply. A connection
// the launcher closes, or a reply that is not what the request calls for,
// is an Error naming the request ("pmi: ..."), never a hang on a closed
// socket or a crash.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::pmi {

class Request;  // one line's tokens, pmi/wire.h

// A connected PMI-1 client (the wire protocol MPICH's simple PMI speaks).
class Client {
public:
    // The value of an environment variable, or nothing when it is unset.
    using Environment = std::function<std::optional<std::string>(const char* name)>;

    // From the environment a launcher sets, read as MPICH reads it: PMI_FD
    // (an inherited connected socket; PMI_RANK, default 0, and PMI_SIZE,
    // default 1), else PMI_PORT=host:port (a TCP connection; with PMI_ID,
    // hydra's "connect" mode, the launcher tells the rank and size in the
    // initack handshake, without it they come from PMI_RANK and PMI_SIZE).
    // Neither PMI_FD nor PMI_PORT: nothing (not started by a PMI launcher).
    // Performs init (cmd=init pmi_version=1 pmi_subversion=1), get_maxes,
    // get_appnum and get_my_kvsname. The socket is made close-on-exec, so
    // that the program's own children do not inherit it.
    static Result<std::optional<Client>> from_environment();
    static Result<std::optional<Client>> from_environment(const Environment& environment);
    // The same handshake on a connected socket; takes ownership of `fd`
    // (closed on an error too).
    static Result<Client> connect_fd(int fd, int rank, int size);

    Client(Client&& other) noexcept;
    Client& operator=(Client&& other) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client();  // closes the socket, without finalize

    int rank() const { return rank_; }
    int size() const { return size_; }
    int appnum() const { return appnum_; }
    const std::string& kvs_name() const { return kvs_name_; }
    // The launcher's limits, as announced by get_maxes and clamped the way
    // MPICH clamps them so that a put always fits in one line: hydra's
    // 256/64/1024 give a value of at most 674 bytes, gantry's 64/64/866 one
    // of 866.
    std::size_t key_max() const { return key_max_; }
    std::size_t value_max() const { return value_max_; }

    // A key-value pair for the job's other tasks to get after the next
    // barrier. Refused without asking the launcher: an empty key, a key or
    // value longer than the launcher's limits, a key holding '=', and a key
    // or value holding a space or a control byte (a value may hold '=', as
    // MPICH's own do).
    Status put(std::string_view key, std::string_view value);
    // Waits until every task of the job has entered the barrier (barrier_in,
    // barrier_out): afterwards, every put made before it can be got. PMI-1
    // has no separate commit.
    Status barrier();
    // The value put under `key`; an Error of kind not_found when the
    // launcher does not have it (rc other than 0).
    Result<std::string> get(std::string_view key);
    // Tells the launcher the program is done (finalize, finalize_ack) and
    // closes the socket; any later request is an error.
    Status finalize();
    // Asks the launcher to end the job with exit code `code` (cmd=abort
    // exitcode=<code> message=<message, its spaces as '_'>). The launcher
    // does not answer: returns once the request is sent, and the caller
    // should exit with `code` unless the launcher kills it first.
    Status abort(int code, std::string_view message);

private:
    Client(int fd, int rank, int size) : fd_(fd), rank_(rank), size_(size) {}
    // init, get_maxes, get_appnum and get_my_kvsname.
    Status handshake();
    // PMI_PORT with PMI_ID: the initack exchange, which gives rank and size.
    Status initack(std::string_view pmi_id);
    // Sends `line` (without its newline), then reads the reply, which must
    // be `cmd=<reply>`. The Request points into reply_line_, valid until
    // the next call.
    Result<Request> call(std::string_view command, const std::string& line, std::string_view reply);
    Status send(std::string_view command, const std::string& line);
    Result<Request> receive(std::string_view command, std::string_view reply);
    Status check_open(std::string_view command) const;
    Status check_key(std::string_view command, std::string_view key) const;
    void close();

    int fd_ = -1;
    int rank_ = 0;
    int size_ = 1;
    int appnum_ = 0;
    std::string kvs_name_;
    std::size_t key_max_ = 0;
    std::size_t value_max_ = 0;
    std::string pending_;     // bytes read after the last reply line
    std::string reply_line_;  // the last reply line, without its newline
};

}  // namespace gantry::pmi
