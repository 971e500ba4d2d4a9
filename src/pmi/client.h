// A PMI client, the other end of pmi::Server: what a program started by a
// launcher (gantry run, mpiexec.hydra, srun --mpi=pmi2) speaks to learn its
// rank and the job's size and to exchange key-value pairs with the job's
// other tasks (docs/pmi.md). It speaks either wire: PMI-1, MPICH's "simple"
// protocol of lines, which gantry's server, hydra and Slurm serve, or
// PMI-2, the length-prefixed commands of Slurm's mpi/pmi2 plugin (pmi/wire.h).
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

class Request;      // one PMI-1 line's tokens, pmi/wire.h
class Pmi2Command;  // one PMI-2 command's pairs, pmi/wire.h

enum class Wire { kPmi1, kPmi2 };

// A connected PMI client.
class Client {
public:
    // The value of an environment variable, or nothing when it is unset.
    using Environment = std::function<std::optional<std::string>(const char* name)>;

    // From the environment a launcher sets, read as MPICH reads it:
    //
    // - PMI_FD and PMI_JOBID: PMI-2 over the inherited socket PMI_FD. Only
    //   Slurm's mpi/pmi2 plugin sets PMI_JOBID (its "JOB.STEP"; with
    //   PMI_FD, PMI_RANK and PMI_SIZE). gantry's shell, which serves PMI-1
    //   only, removes an inherited PMI_JOBID from its tasks' environment, so
    //   that a client under gantry inside a Slurm step never asks it for
    //   PMI-2; hydra passes one on, but serves PMI-2 too.
    // - PMI_FD alone: PMI-1 over that socket (gantry run, mpiexec.hydra);
    //   PMI_RANK, default 0, and PMI_SIZE, default 1.
    // - Else PMI_PORT=host:port: PMI-1 over TCP (hydra's -pmi-port); with
    //   PMI_ID, hydra's "connect" mode, the launcher tells the rank and size
    //   in the initack handshake, without it they come from PMI_RANK and
    //   PMI_SIZE.
    // - None of them: nothing (not started by a PMI launcher).
    //
    // Performs the wire's handshake (connect_fd, connect_fd_pmi2). The
    // socket is made close-on-exec, so that the program's own children do
    // not inherit it.
    static Result<std::optional<Client>> from_environment();
    static Result<std::optional<Client>> from_environment(const Environment& environment);
    // PMI-1 on a connected socket: init (cmd=init pmi_version=1
    // pmi_subversion=1), get_maxes, get_appnum and get_my_kvsname. Takes
    // ownership of `fd` (closed on an error too).
    static Result<Client> connect_fd(int fd, int rank, int size);
    // PMI-2 on a connected socket: init as a PMI-1 line asking for version
    // 2 (cmd=init pmi_version=2 pmi_subversion=0), then fullinit with
    // `jobid` and `rank`, whose reply gives the rank, size and appnum. The
    // kvs name is `jobid`. Takes ownership of `fd` (closed on an error too).
    static Result<Client> connect_fd_pmi2(int fd, std::string_view jobid, int rank);

    Client(Client&& other) noexcept;
    Client& operator=(Client&& other) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client();  // closes the socket, without finalize

    Wire wire() const { return wire_; }
    int rank() const { return rank_; }
    int size() const { return size_; }
    int appnum() const { return appnum_; }  // Slurm's PMI-2 says -1
    const std::string& kvs_name() const { return kvs_name_; }
    // The launcher's limits. PMI-1: as announced by get_maxes and clamped
    // the way MPICH clamps them so that a put always fits in one line:
    // hydra's 256/64/1024 give a value of at most 674 bytes, gantry's
    // 64/64/866 one of 866. PMI-2: 64 and 1024, the wire's own.
    std::size_t key_max() const { return key_max_; }
    std::size_t value_max() const { return value_max_; }

    // A key-value pair for the job's other tasks to get after the next
    // barrier (PMI-1 put, PMI-2 kvs-put). Refused without asking the
    // launcher: an empty key, a key or value longer than the launcher's
    // limits, a key holding '=', a key or value holding a control byte, and
    // what the wire cannot carry: a space (PMI-1), a ';' (PMI-2, which
    // Slurm cannot carry). A value may hold '=', as MPICH's own do.
    Status put(std::string_view key, std::string_view value);
    // Waits until every task of the job has entered the barrier (PMI-1
    // barrier_in and barrier_out, PMI-2 kvs-fence): afterwards, every put
    // made before it can be got.
    Status barrier();
    // The value put under `key`; an Error of kind not_found when the
    // launcher does not have it (PMI-1: rc other than 0; PMI-2: found=FALSE).
    Result<std::string> get(std::string_view key);
    // Tells the launcher the program is done (finalize, and its reply) and
    // closes the socket; any later request is an error.
    Status finalize();
    // Asks the launcher to end the job. PMI-1: with exit code `code`
    // (cmd=abort exitcode=<code> message=<message, its spaces as '_'>).
    // PMI-2 carries no code: the whole job is ended (cmd=abort;isworld=TRUE;
    // msg=<message, its ';' as '_'>;), Slurm by SIGKILL. The launcher does
    // not answer: returns once the request is sent, and the caller should
    // exit with `code` unless the launcher kills it first.
    Status abort(int code, std::string_view message);

private:
    Client(int fd, int rank, int size, Wire wire)
        : fd_(fd), rank_(rank), size_(size), wire_(wire) {}
    // PMI-1: init, get_maxes, get_appnum and get_my_kvsname.
    Status handshake();
    // PMI-2: init asking for version 2, then fullinit.
    Status handshake_pmi2(std::string_view jobid, int rank);
    // PMI_PORT with PMI_ID: the initack exchange, which gives rank and size.
    Status initack(std::string_view pmi_id);
    // PMI-1: sends `line` (without its newline), then reads the reply,
    // which must be `cmd=<reply>`. The Request points into reply_line_,
    // valid until the next call.
    Result<Request> call(std::string_view command, const std::string& line, std::string_view reply);
    Result<Request> receive(std::string_view command, std::string_view reply);
    // PMI-2: sends `request`, then reads the reply, which must be
    // `cmd=<request's name>-response` and hold rc=0.
    Result<Pmi2Command> call(const Pmi2Command& request);
    Result<Pmi2Command> receive(const Pmi2Command& request);
    Status send(std::string_view command, std::string_view bytes);
    // One read() into pending_: an error when the launcher has closed the
    // connection, waited for `reply`.
    Status read_more(std::string_view command, std::string_view reply);
    Status check_open(std::string_view command) const;
    Status check_key(std::string_view command, std::string_view key) const;
    // What put and abort cannot send on this wire: PMI-1 a space, PMI-2 a
    // ';'; both a control byte.
    std::optional<char> unsendable(std::string_view text) const;
    // The request's name on this wire, for messages: put or kvs-put...
    std::string_view name_of(std::string_view pmi1, std::string_view pmi2) const {
        return wire_ == Wire::kPmi2 ? pmi2 : pmi1;
    }
    void close();

    int fd_ = -1;
    int rank_ = 0;
    int size_ = 1;
    Wire wire_ = Wire::kPmi1;
    int appnum_ = 0;
    std::string kvs_name_;
    std::size_t key_max_ = 0;
    std::size_t value_max_ = 0;
    std::string pending_;     // bytes read after the last reply
    std::string reply_line_;  // PMI-1: the last reply line, without its newline
};

}  // namespace gantry::pmi
