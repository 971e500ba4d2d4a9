// The exec service: starts a job's shell as a child process of the broker
// and talks to it. The shell is the gantry executable run as
// `gantry job-shell`: it reads what to run (the job's id, jobspec and R) on
// fd 4, maps its node's tasks inside that R, runs them, and reports their
// output, its messages and each task's end as records on fd 3 (the
// supervisor socket, src/shell/records.h), from which it also takes signals.
// Its stdin (fd 0) is a pipe the broker feeds from front ends.
//
// When the broker dies, the shell sees its socket close and kills the tasks:
// nothing outlives the instance that ran it. When the shell dies without
// ending them, the broker kills what is left of its session and of its
// job's cgroup (the shell runs no watcher of its own under an instance). A second broker on another
// node will start its shells the same way and forward the records.
#pragma once

#include <sys/types.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include "broker/child.h"
#include "shell/records.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// Bytes written to a pipe or socket in order, as the other end takes them,
// without ever blocking the loop.
class WriteQueue {
public:
    WriteQueue(asio::io_context& loop, int fd);
    void write(std::string_view bytes);
    // Closes the descriptor once everything queued is written.
    void close_when_written();
    bool closed() const { return !stream_.is_open(); }
    // `room` runs (posted on the loop) once at most kRoom bytes wait, or the
    // descriptor is closed; dropped if the queue goes first.
    void when_room(std::function<void()> room);
    static constexpr std::size_t kRoom = std::size_t{1} << 20;

private:
    void write_some();
    void make_room();
    std::size_t waiting() const { return writing_buffer_.size() - written_ + queue_.size(); }

    asio::posix::stream_descriptor stream_;
    std::string writing_buffer_;  // what the writes under way read from
    std::size_t written_ = 0;     // of writing_buffer_
    std::string queue_;           // what comes after it
    std::vector<std::function<void()>> waiting_for_room_;
    bool writing_ = false;
    bool closing_ = false;
    // Held by the queue alone: a completion that finds it expired does not
    // touch the queue.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The program a broker started as `gantry` starts as each job's shell:
// `gantry-job-shell` beside it, which loads only what a shell uses, or where
// that is missing `gantry` itself (as `gantry job-shell`).
std::string job_shell_beside(const std::filesystem::path& gantry);
// job_shell_beside() of the running executable.
Result<std::string> job_shell_program();

class ShellProcess {
public:
    struct Handlers {
        std::function<void(shell::records::Record&& record)> record;
        // The shell sent something that is not a record; it is killed.
        std::function<void(const Error& error)> broken;
        // The shell process has ended and every record it sent was handled.
        std::function<void(int wait_status)> ended;
        // Asked after each read of records: true to read no more until
        // `resume` is called (whatever the records went to is full), so
        // that the shell, and then its tasks, wait in write. Unset: never.
        std::function<bool(std::function<void()> resume)> hold = nullptr;
    };

    // Starts `program job-shell` with `header` (one JSON document) on its fd 4.
    static Result<std::unique_ptr<ShellProcess>> start(asio::io_context& loop,
                                                       const std::string& program,
                                                       const Json& header, Handlers handlers);
    // A shell still running is killed with its process group; it is reaped
    // by the broker's SIGCHLD-free wait on its pidfd only while this lives,
    // so the destructor reaps it too.
    ~ShellProcess();
    ShellProcess(const ShellProcess&) = delete;
    ShellProcess& operator=(const ShellProcess&) = delete;

    pid_t pid() const { return pid_; }
    // Every task's process group gets `number`.
    void signal(int number);
    // SIGTERM to every task, SIGKILL after the job's kill timeout.
    void terminate();
    // Completes the shell's PMI barrier with every node's puts (KEY=VALUE
    // lines, shell/records.h).
    void complete_fence(std::string merged_puts);
    // Direct modex (PMIx): asks the shell for what its task `task` put (a
    // modex record answers), or answers the shell's dmodex record for
    // `task` with the data, or with nothing.
    void request_modex(std::uint32_t task, const std::string& key);
    void answer_modex(std::uint32_t task, std::optional<std::string> data);
    // Bytes for the tasks that read stdin, and its end.
    Status write_stdin(std::string_view bytes);
    void close_stdin();
    bool stdin_open() const { return stdin_ && !stdin_->closed(); }
    // WriteQueue::when_room of the tasks' stdin.
    void when_stdin_room(std::function<void()> room);

private:
    ShellProcess(asio::io_context& loop, pid_t pid, std::string job_id, int socket, int stdin_pipe,
                 Handlers handlers);
    void read_records();
    void finish_if_done();

    asio::io_context& loop_;
    pid_t pid_;
    std::string job_id_;  // names the job's cgroup, with pid_
    Handlers handlers_;
    asio::posix::stream_descriptor socket_;
    std::optional<WriteQueue> control_;  // writes on a dup of the socket
    std::optional<WriteQueue> stdin_;
    std::optional<ChildExit> exit_;
    shell::records::Reader reader_;
    std::string buffer_ = std::string(64 * 1024, '\0');
    std::optional<int> wait_status_;  // once reaped
    bool socket_done_ = false;        // end of file, or broken
    bool ended_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for a held read's resume
};

}  // namespace gantry::broker
