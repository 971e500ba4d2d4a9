#include "broker/exec.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <asio/post.hpp>
#include <asio/write.hpp>

#include "pmix/server.h"
#include "shell/cgroup.h"
#include "shell/fd.h"
#include "util/file.h"
#include "util/spawn.h"

namespace gantry::broker {

namespace {

constexpr std::string_view kDomain = "exec";

// The job shell's descriptors: fixed numbers, as `gantry job-shell` expects.
constexpr int kSupervisorFd = 3;
constexpr int kHeaderFd = 4;

Error system_error(const std::string& what, int number) {
    return Error(std::string(kDomain), what + ": " + std::strerror(number));
}

// The header in an anonymous file: the shell reads it at its pace, and the
// broker never waits for a pipe to drain.
Result<shell::Fd> header_file(const Json& header) {
    shell::Fd fd(::memfd_create("gantry-job", MFD_CLOEXEC));
    if (!fd)
        return system_error("memfd_create", errno);
    if (const int error = write_all(fd.get(), to_compact(header)))
        return system_error("writing the job's header", error);
    if (::lseek(fd.get(), 0, SEEK_SET) != 0)
        return system_error("lseek", errno);
    return fd;
}

// Every process left in session `session` gets SIGKILL. A job shell leads
// a session of its own and its tasks stay in it (in their own process
// groups), so when the shell dies without ending them, this finds them;
// Linux does not reuse a number still naming a session.
void kill_session(pid_t session) {
    std::error_code failure;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", failure)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        std::getline(stat, text);
        const auto paren = text.rfind(')');
        if (paren == std::string::npos)
            continue;
        std::istringstream fields(text.substr(paren + 1));
        std::string state;
        pid_t parent = 0, group = 0, sid = 0;
        if (fields >> state >> parent >> group >> sid && sid == session)
            ::kill(std::stoi(name), SIGKILL);
    }
}

// What a job shell that died could not end: the processes of its session,
// and its job's cgroup (what left the session too), which the shell makes
// under its broker's own cgroup and, supervised, leaves to the broker
// rather than to a watcher of its own (shell/containment.h).
void end_what_the_shell_left(pid_t shell, const std::string& job_id) {
    kill_session(shell);
    if (const auto own = shell::own_cgroup_dir()) {
        const std::string dir = *own + "/" + shell::job_cgroup_name(shell, job_id);
        if (::access(dir.c_str(), F_OK) == 0)
            shell::kill_cgroup(dir);
    }
    std::error_code ignored;
    std::filesystem::remove_all(pmix::server_directory_of(shell), ignored);
}

}  // namespace

// --- WriteQueue ----------------------------------------------------------------

WriteQueue::WriteQueue(asio::io_context& loop, int fd) : stream_(loop, fd) {
    stream_.non_blocking(true);
}

void WriteQueue::write(std::string_view bytes) {
    if (closed() || closing_)
        return;
    queue_.append(bytes);
    write_some();
}

void WriteQueue::when_room(std::function<void()> room) {
    waiting_for_room_.push_back(std::move(room));
    make_room();
}

void WriteQueue::make_room() {
    if (waiting_for_room_.empty() || (waiting() > kRoom && !closed()))
        return;
    for (auto& room : std::exchange(waiting_for_room_, {}))
        asio::post(stream_.get_executor(), std::move(room));
}

void WriteQueue::close_when_written() {
    closing_ = true;
    if (!writing_ && waiting() == 0 && stream_.is_open())
        stream_.close();
}

void WriteQueue::write_some() {
    if (writing_)
        return;
    if (written_ == writing_buffer_.size()) {
        writing_buffer_.clear();
        written_ = 0;
        writing_buffer_.swap(queue_);
    }
    if (writing_buffer_.empty()) {
        if (closing_ && stream_.is_open())
            stream_.close();
        return;
    }
    writing_ = true;
    // The bytes being written stay where they are until the write
    // completes: what is queued meanwhile goes to queue_, whose growth
    // would move them. The queue may be gone when the write completes (a
    // job shell that ended while a signal or stdin was on its way to it): a
    // write done before the destruction still has its completion to run.
    stream_.async_write_some(
        asio::buffer(writing_buffer_.data() + written_, writing_buffer_.size() - written_),
        [this, alive = std::weak_ptr<bool>(alive_)](const asio::error_code& failure,
                                                    std::size_t written) {
            if (alive.expired())
                return;
            writing_ = false;
            if (failure) {
                // The reader has gone: nothing more to say to it.
                writing_buffer_.clear();
                written_ = 0;
                queue_.clear();
                if (stream_.is_open())
                    stream_.close();
                make_room();
                return;
            }
            written_ += written;
            make_room();
            write_some();
        });
}

std::string job_shell_beside(const std::filesystem::path& gantry) {
    const std::filesystem::path beside = gantry.parent_path() / "gantry-job-shell";
    return ::access(beside.c_str(), X_OK) == 0 ? beside.string() : gantry.string();
}

Result<std::string> job_shell_program() {
    std::error_code failure;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", failure);
    if (failure)
        return Error(std::string(kDomain),
                     "cannot find the gantry executable: " + failure.message());
    return job_shell_beside(self);
}

// --- ShellProcess -------------------------------------------------------------

Result<std::unique_ptr<ShellProcess>> ShellProcess::start(asio::io_context& loop,
                                                          const std::string& program,
                                                          const Json& header, Handlers handlers) {
    auto socket = shell::make_socket_pair();
    if (!socket)
        return socket.error();
    auto input = shell::make_pipe();
    if (!input)
        return input.error();
    auto header_fd = header_file(header);
    if (!header_fd)
        return header_fd.error();
    // Above 4, so that the child's dup2 onto 0, 3 and 4 clobbers none of them.
    auto child_socket = shell::at_least(std::move(socket->write), kHeaderFd + 1);
    auto child_input = shell::at_least(std::move(input->read), kHeaderFd + 1);
    auto child_header = shell::at_least(std::move(*header_fd), kHeaderFd + 1);
    if (!child_socket || !child_input || !child_header)
        return system_error("fcntl", errno);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0)
        return system_error("/dev/null", errno);
    shell::Fd null_fd(null);

    // Its own session, without a terminal: a terminal's signals to the
    // broker do not reach the job (the broker decides what it gets), and an
    // interactive shell in it does not try to take the terminal.
    const auto spawned =
        spawn_process(program, {"gantry", "job-shell"},
                      SpawnOptions{.descriptors = {{child_input->get(), STDIN_FILENO},
                                                   {null_fd.get(), STDOUT_FILENO},
                                                   {child_socket->get(), kSupervisorFd},
                                                   {child_header->get(), kHeaderFd}},
                                   .close_from = kHeaderFd + 1,
                                   .new_session = true});
    if (!spawned)
        return Error::system(std::string(kDomain), "cannot start the job shell " + program + ": " +
                                                       spawned.error().message());
    const pid_t pid = *spawned;
    std::unique_ptr<ShellProcess> process(
        new ShellProcess(loop, pid, header.value("id", std::string()), socket->read.release(),
                         input->write.release(), std::move(handlers)));
    ShellProcess* self = process.get();
    auto exit = ChildExit::watch(loop, pid, [self](int wait_status) {
        self->wait_status_ = wait_status;
        self->finish_if_done();
    });
    if (!exit) {
        ::kill(-pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        process->pid_ = -1;
        return exit.error();
    }
    process->exit_.emplace(std::move(*exit));
    process->read_records();
    return process;
}

ShellProcess::ShellProcess(asio::io_context& loop, pid_t pid, std::string job_id, int socket,
                           int stdin_pipe, Handlers handlers)
    : loop_(loop),
      pid_(pid),
      job_id_(std::move(job_id)),
      handlers_(std::move(handlers)),
      socket_(loop, socket) {
    socket_.non_blocking(true);
    control_.emplace(loop, ::fcntl(socket, F_DUPFD_CLOEXEC, 0));
    stdin_.emplace(loop, stdin_pipe);
}

ShellProcess::~ShellProcess() {
    if (pid_ > 0 && !wait_status_) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        end_what_the_shell_left(pid_, job_id_);
    }
}

void ShellProcess::signal(int number) {
    control_->write(shell::records::encode(
        shell::records::Control{shell::records::Control::Kind::kSignal, number}));
}

void ShellProcess::terminate() {
    control_->write(
        shell::records::encode(shell::records::Control{shell::records::Control::Kind::kTerminate}));
}

void ShellProcess::complete_fence(std::string merged_puts) {
    control_->write(shell::records::encode(
        shell::records::Control{shell::records::Control::Kind::kFence, 0, std::move(merged_puts)}));
}

void ShellProcess::request_modex(std::uint32_t task, const std::string& key) {
    control_->write(shell::records::encode(shell::records::Control{
        .kind = shell::records::Control::Kind::kModexRequest, .bytes = key, .rank = task}));
}

void ShellProcess::answer_modex(std::uint32_t task, std::optional<std::string> data) {
    using Kind = shell::records::Control::Kind;
    control_->write(shell::records::encode(
        data
            ? shell::records::Control{.kind = Kind::kModex, .bytes = std::move(*data), .rank = task}
            : shell::records::Control{.kind = Kind::kNoModex, .rank = task}));
}

Status ShellProcess::write_stdin(std::string_view bytes) {
    if (!stdin_open())
        return Error(std::string(kDomain), "the job's stdin is closed");
    stdin_->write(bytes);
    return {};
}

void ShellProcess::when_stdin_room(std::function<void()> room) {
    if (stdin_)
        stdin_->when_room(std::move(room));
    else
        asio::post(loop_, std::move(room));
}

void ShellProcess::close_stdin() {
    if (stdin_)
        stdin_->close_when_written();
}

void ShellProcess::read_records() {
    socket_.async_read_some(asio::buffer(buffer_),
                            [this](const asio::error_code& failure, std::size_t size) {
                                if (failure == asio::error::operation_aborted)
                                    return;
                                if (failure) {  // end of file: the shell has closed its end
                                    socket_done_ = true;
                                    finish_if_done();
                                    return;
                                }
                                reader_.append(std::string_view(buffer_.data(), size));
                                for (;;) {
                                    auto record = reader_.next();
                                    if (!record) {
                                        socket_done_ = true;
                                        if (!wait_status_)
                                            ::kill(-pid_, SIGKILL);
                                        handlers_.broken(record.error());
                                        finish_if_done();
                                        return;
                                    }
                                    if (!*record)
                                        break;
                                    handlers_.record(std::move(**record));
                                }
                                const auto resume = [this, alive = std::weak_ptr<bool>(alive_)] {
                                    if (!alive.expired())
                                        read_records();
                                };
                                if (!handlers_.hold || !handlers_.hold(resume))
                                    read_records();
                            });
}

void ShellProcess::finish_if_done() {
    if (ended_ || !socket_done_ || !wait_status_)
        return;
    ended_ = true;
    // A shell that was killed could not end its tasks: the broker does.
    if (WIFSIGNALED(*wait_status_))
        end_what_the_shell_left(pid_, job_id_);
    handlers_.ended(*wait_status_);
}

}  // namespace gantry::broker
