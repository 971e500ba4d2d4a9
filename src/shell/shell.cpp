// The shell's event loop: one job's tasks, their output, stdin and PMI,
// the signals the shell receives, the time limit, and the exit code.
#include "shell/shell.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "shell/containment.h"
#include "shell/exit_status.h"
#include "shell/fd.h"
#include "shell/input.h"
#include "shell/io_fd.h"
#include "shell/output.h"
#include "shell/pmix_clients.h"
#include "shell/readiness.h"
#include "shell/records.h"
#include "shell/sink.h"
#include "shell/spawn.h"
#include "topo/topology.h"
#include "util/base64.h"
#include "util/duration.h"

namespace gantry::shell {
namespace {

using Clock = std::chrono::steady_clock;
using Descriptor = asio::posix::stream_descriptor;

// One buffer for every read from a task: a stream keeps only its
// unterminated line, never a buffer of its own.
constexpr std::size_t kReadSize = 64 * 1024;
// Reads from one pipe in one turn of the loop before the others get theirs.
constexpr int kReadsPerTurn = 8;
// A second SIGINT within this kills the job.
constexpr auto kInterruptWindow = std::chrono::seconds(2);
// Runtime failures of the shell itself (DESIGN.md).
constexpr int kShellFailure = 1;
// The exit code of a pipeline's writer whose reader has gone.
constexpr int kClosedOutput = 128 + SIGPIPE;

// The shell's soft RLIMIT_NOFILE raised to its hard limit while the job
// runs (256 tasks keep 1000 descriptors or more open); tasks get back the
// value it had.
class RaisedFileLimit {
public:
    RaisedFileLimit() {
        rlimit limit{};
        if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max)
            return;
        const rlim_t original = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &limit) == 0)
            original_ = original;
    }
    RaisedFileLimit(const RaisedFileLimit&) = delete;
    RaisedFileLimit& operator=(const RaisedFileLimit&) = delete;
    ~RaisedFileLimit() {
        rlimit limit{};
        if (original_ && ::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
            limit.rlim_cur = *original_;
            ::setrlimit(RLIMIT_NOFILE, &limit);
        }
    }
    const std::optional<rlim_t>& original() const { return original_; }

private:
    std::optional<rlim_t> original_;
};

// SIGPIPE ignored while the job runs: a reader that has gone becomes EPIPE
// from write, never the end of the shell.
class IgnoredSigpipe {
public:
    IgnoredSigpipe() {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &previous_);
    }
    IgnoredSigpipe(const IgnoredSigpipe&) = delete;
    IgnoredSigpipe& operator=(const IgnoredSigpipe&) = delete;
    ~IgnoredSigpipe() { ::sigaction(SIGPIPE, &previous_, nullptr); }

private:
    struct sigaction previous_ {};
};

// Every signal blocked while tasks start: no handler runs in a child that
// shares the shell's memory, and no signal is lost (it waits until the end).
class BlockedSignals {
public:
    BlockedSignals() {
        sigset_t all;
        ::sigfillset(&all);
        ::pthread_sigmask(SIG_BLOCK, &all, &previous_);
    }
    BlockedSignals(const BlockedSignals&) = delete;
    BlockedSignals& operator=(const BlockedSignals&) = delete;
    ~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

private:
    sigset_t previous_{};
};

// The names ulimit and --rlimit give resources.
std::string resource_name(int resource) {
    static constexpr std::pair<int, const char*> kNames[] = {
        {RLIMIT_AS, "as"},
        {RLIMIT_CORE, "core"},
        {RLIMIT_CPU, "cpu"},
        {RLIMIT_DATA, "data"},
        {RLIMIT_FSIZE, "fsize"},
        {RLIMIT_LOCKS, "locks"},
        {RLIMIT_MEMLOCK, "memlock"},
        {RLIMIT_MSGQUEUE, "msgqueue"},
        {RLIMIT_NICE, "nice"},
        {RLIMIT_NOFILE, "nofile"},
        {RLIMIT_NPROC, "nproc"},
        {RLIMIT_RSS, "rss"},
        {RLIMIT_RTPRIO, "rtprio"},
        {RLIMIT_RTTIME, "rttime"},
        {RLIMIT_SIGPENDING, "sigpending"},
        {RLIMIT_STACK, "stack"},
    };
    for (const auto& [number, name] : kNames)
        if (number == resource)
            return name;
    return "resource " + std::to_string(resource);
}

std::string limit_text(rlim_t value) {
    return value == RLIM_INFINITY ? "unlimited" : std::to_string(value);
}

// Writes all of `text`, waiting for `to` as long as it takes (before the
// loop exists); gives up when `to` fails.
void write_fully(const IoFd& to, std::string_view text) {
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = write_some(to, text.data() + written, text.size() - written);
        if (n >= 0)
            written += static_cast<std::size_t>(n);
        else if (errno == EAGAIN)
            wait_writable(to);
        else if (errno != EINTR)
            return;
    }
}

bool is_socket(int fd) {
    struct stat st;
    return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

// The supervisor's socket as the shell uses it: MSG_DONTWAIT on every call,
// its flags untouched.
IoFd supervisor_io(int fd) {
    return IoFd{Fd(), fd, IoMode::kSocket};
}

// The job's PMI data, with what a caller left out made up from its tasks
// (a job built by hand, in tests). The server serves the tasks' ranks:
// every task the shell runs is on this node.
pmi::JobInfo pmi_info_of(const Job& job) {
    pmi::JobInfo info = job.pmi;
    std::uint32_t ranks = 0;
    IdSet local_ranks;
    for (const Task& task : job.tasks) {
        ranks = std::max(ranks, task.rank + 1);
        local_ranks.insert(task.rank);
    }
    info.local_ranks = std::move(local_ranks);
    if (info.kvsname.empty())
        info.kvsname = "gantry_" + (job.id.empty() ? std::string("job") : job.id);
    info.size = std::max(info.size, ranks);
    info.universe_size = std::max(info.universe_size, info.size);
    if (info.appnum_of_rank.size() < info.size) {
        info.appnum_of_rank.resize(info.size, 0);
        for (const Task& task : job.tasks)
            info.appnum_of_rank[task.rank] = task.app;
    }
    return info;
}

// A task's stdout or stderr on its way to a sink, and to a second one when
// it also goes to an --output-filename file.
struct TaskStream {
    // Records for the supervisor are never labelled: front ends label what
    // they display.
    TaskStream(const Destination& to, const Destination& copy, const std::string& label,
               const Output& output, std::string_view stream)
        : lines(to.framed ? std::string() : label, output.unbuffered, stamp(output, stream)),
          writer(to.writer),
          sink(to.sink) {
        if (!copy.writer)
            return;
        copy_lines.emplace(copy.framed ? std::string() : label, output.unbuffered,
                           stamp(output, stream));
        copy_writer = copy.writer;
        copy_sink = copy.sink;
    }
    static std::string_view stamp(const Output& output, std::string_view stream) {
        return output.timestamp ? stream : std::string_view();
    }
    void add(std::string_view bytes, std::string& scratch) {
        lines.add(bytes, scratch, *writer);
        if (copy_lines)
            copy_lines->add(bytes, scratch, *copy_writer);
    }
    void finish(std::string& scratch) {
        lines.finish(scratch, *writer);
        if (copy_lines)
            copy_lines->finish(scratch, *copy_writer);
    }
    // A sink too full to take more; null: none.
    Sink* full_sink() const {
        if (sink->full())
            return sink;
        return copy_sink && copy_sink->full() ? copy_sink : nullptr;
    }
    std::optional<Descriptor> pipe;  // empty once drained and closed
    LineAssembler lines;
    ByteWriter* writer;  // takes the assembled bytes
    Sink* sink;          // the queue behind `writer`, whose fullness stops the reads
    std::optional<LineAssembler> copy_lines;
    ByteWriter* copy_writer = nullptr;
    Sink* copy_sink = nullptr;
    bool waiting = false;    // for the pipe to be readable
    bool scheduled = false;  // a read is posted, or waits for room in a sink
};

// The shell's end of a task's PMI socket.
struct PmiConnection {
    std::optional<Descriptor> socket;
    std::string unsent;  // replies the socket has not taken yet
    bool waiting_writable = false;
};

struct RunningTask {
    RunningTask(const Task& task, const Output& output, const Sinks& sinks, std::size_t index)
        : task(task),
          out(sinks.out_of(index), sinks.out_copy_of(index), label_of(task, output), output,
              "stdout"),
          err(sinks.err_of(index), sinks.err_copy_of(index), label_of(task, output), output,
              "stderr") {}
    static std::string label_of(const Task& task, const Output& output) {
        return output.label ? std::to_string(task.rank) + ": " : std::string();
    }
    const Task& task;
    pid_t pid = -1;
    bool reaped = false;
    std::size_t live_slot = 0;  // where in JobRun::live_ until reaped
    TaskStream out;
    TaskStream err;
    PmiConnection pmi;
    std::optional<std::size_t> stdin_receiver;
};

// The descriptors made for one task: its ends close once it has started.
struct Plumbing {
    Fd task_in;  // a stdin pipe; empty: the job's /dev/null
    Fd task_out;
    Fd task_err;  // empty: stderr merged into task_out
    Fd task_pmi;
    Fd shell_out;
    Fd shell_err;
    Fd shell_pmi;
    std::optional<std::size_t> receiver;  // of the job's stdin
};

// Hands the PMIx server's events, which come on the library's thread, to
// the shell's loop until the job ends. Whether a task has connected and
// finalized is recorded at once rather than posted: a task's finalize is
// then always seen before its end (task_exited), which a posted record
// could follow.
class PmixMailbox {
public:
    explicit PmixMailbox(asio::io_context& loop) : loop_(&loop) {}

    template <typename Handler>
    void post(Handler handler) {
        const std::lock_guard lock(mutex_);
        if (loop_)
            asio::post(*loop_, std::move(handler));
    }
    // The loop is going: later events are dropped.
    void close() {
        const std::lock_guard lock(mutex_);
        loop_ = nullptr;
    }
    void connected(std::uint32_t rank) {
        const std::lock_guard lock(mutex_);
        connected_.insert(rank);
    }
    void finalized(std::uint32_t rank) {
        const std::lock_guard lock(mutex_);
        finalized_.insert(rank);
    }
    // Connected and not finalized: its peers may wait for it in a fence.
    bool in_session(std::uint32_t rank) const {
        const std::lock_guard lock(mutex_);
        return connected_.contains(rank) && !finalized_.contains(rank);
    }

private:
    mutable std::mutex mutex_;
    asio::io_context* loop_;
    std::set<std::uint32_t> connected_;
    std::set<std::uint32_t> finalized_;
};

class JobRun {
public:
    explicit JobRun(const Job& job)
        : job_(job),
          pmi_(pmi_info_of(job)),
          pmi_owner_(job.pmi_owner ? job.pmi_owner : std::make_shared<LocalPmiOwner>()),
          signals_(loop_),
          time_limit_(loop_),
          kill_timer_(loop_) {}

    int run();

private:
    // Before anything starts.
    std::optional<std::vector<std::string>> find_commands();
    Status check_soft_limits() const;
    bool receives_input(const Task& task) const;
    Status watch_supervisor();
    void watch_terminals();
    std::string cgroup_name() const;

    // Starting.
    bool start_tasks(const std::vector<std::string>& paths, std::optional<rlim_t> nofile);
    Result<Plumbing> make_plumbing(const Task& task);
    void report_start_failure(const Task& task, const StartResult& start);
    void watch(RunningTask& task, Plumbing& plumbing);

    // Output.
    void wait_readable(RunningTask& task, TaskStream& stream);
    void schedule_read(RunningTask& task, TaskStream& stream, Sink* when_room);
    void read_stream(RunningTask& task, TaskStream& stream);
    void drain_after_exit(RunningTask& task, TaskStream& stream);
    void close_stream(TaskStream& stream);

    // PMI-1 and PMIx.
    bool start_pmix(const std::vector<std::string>& paths);
    std::vector<std::string> pmix_variables(const Task& task, std::vector<std::string> from_server);
    void pmix_fence(std::string data, pmix::Events::FenceDone done);
    struct ModexServe;
    void ask_modex(std::uint32_t rank, std::string key, pmix::Events::ModexDone done);
    void send_modex_request(std::uint32_t rank, const std::string& key);
    void answer_modex(std::uint32_t rank, const std::optional<std::string>& data);
    void serve_modex(std::uint32_t rank, std::string key);
    bool try_serve_modex(std::uint32_t rank, const std::string& key);
    void serve_modex_later(ModexServe& serving);
    void hand_over_barrier(pmi::KeyValues puts,
                           std::function<void(const pmi::KeyValues&)> complete);
    void complete_next_barrier(const pmi::KeyValues& merged_puts);
    void aborted(std::uint32_t rank, int exit_code, std::string_view how);
    void wait_pmi(RunningTask& task);
    void read_pmi(RunningTask& task);
    void handle(RunningTask& from, pmi::Effects effects);
    void send_replies(const std::vector<pmi::Reply>& replies);
    void complete_barrier(const pmi::KeyValues& merged_puts);
    void send_pmi(RunningTask& task, std::string_view line);
    void write_pmi(RunningTask& task);
    void close_pmi(RunningTask& task);

    // Signals and timers.
    void wait_signal();
    void on_signal(int signal);
    void signal_tasks(int signal);
    void start_time_limit();

    // The supervisor: control messages in, records out.
    void wait_supervisor();
    void read_supervisor();
    void obey_controls();
    void obey(const records::Control& control);
    void lose_supervisor(const std::string& line);
    void send_record(const records::Record& record);

    // Ends.
    void reap();
    void reap_each();
    bool reap(RunningTask& task);  // true when it had exited
    void task_exited(RunningTask& task, int wait_status);
    void fail(int exit_code, const std::string& line);
    void output_closed(const std::string& stream);
    void terminate_job();
    void end_job(int first_signal);
    void kill_job();
    void finish_if_done();

    void say(const std::string& line);
    void print_error(const std::string& line) const;
    std::string task_name(const Task& task) const;
    std::string app_name(std::uint32_t app) const;

    const Job& job_;
    asio::io_context loop_;  // first: everything below uses it
    std::unique_ptr<Sinks> sinks_;
    std::unique_ptr<InputFeeder> input_;
    pmi::Server pmi_;
    std::shared_ptr<PmiOwner> pmi_owner_;
    // The barriers and fences handed over, oldest first: each one's owner
    // answers them in this order.
    std::deque<std::function<void(const pmi::KeyValues&)>> barriers_;
    std::shared_ptr<PmixMailbox> pmix_mailbox_ = std::make_shared<PmixMailbox>(loop_);
    std::unique_ptr<pmix::Job> pmix_;  // null: the job gets no PMIx
    // Direct modex: this node's tasks' gets of other nodes' data, sent to
    // the supervisor; and other nodes' requests for a key this node's task
    // has not put yet.
    records::ModexRequests modex_asked_;
    struct ModexServe {
        std::uint32_t rank = 0;
        std::string key;
        asio::steady_timer timer;
        std::chrono::milliseconds wait{1};
    };
    std::list<ModexServe> modex_waiting_;  // a list: each one's timer must not move
    asio::signal_set signals_;
    asio::steady_timer time_limit_;
    asio::steady_timer kill_timer_;
    std::optional<Readiness> supervisor_readable_;
    records::ControlReader controls_;
    bool supervisor_lost_ = false;
    std::unique_ptr<Containment> containment_;  // from the first task's start
    std::vector<RunningTask> tasks_;            // reserved up front: never moves
    std::vector<std::size_t> live_;             // tasks not reaped yet, in no order
    std::unordered_map<std::uint32_t, std::size_t> task_of_rank_;
    std::unordered_map<pid_t, std::size_t> task_of_pid_;  // tasks not reaped yet
    std::vector<char> buffer_ = std::vector<char>(kReadSize);
    std::string scratch_;           // labelled lines being built
    std::size_t open_streams_ = 0;  // tasks' stdout and stderr pipes not closed yet
    bool starting_ = true;
    bool terminating_ = false;
    bool killing_ = false;
    bool interrupt_killed_ = false;
    bool output_closed_ = false;
    std::optional<Clock::time_point> last_interrupt_;
    std::optional<int> failure_code_;      // the first failure's, in time order
    std::optional<int> task_zero_status_;  // its wait status, once reaped here
    std::optional<int> abort_code_;        // a PMI abort's
};

int JobRun::run() {
    // First: a reader of stderr that has gone must not end gantry, and 256
    // tasks' output files need the descriptors.
    const IgnoredSigpipe ignored_sigpipe;
    const RaisedFileLimit file_limit;
    if (job_.supervisor_fd && !is_socket(*job_.supervisor_fd)) {
        // Nowhere else to say it: the caller's stderr.
        write_fully(writable_stdio(2), "gantry: shell: the supervisor's descriptor " +
                                           std::to_string(*job_.supervisor_fd) +
                                           " is not a socket\n");
        return kShellFailure;
    }
    const auto paths = find_commands();
    if (!paths)
        return *failure_code_;
    if (auto limits = check_soft_limits(); !limits) {
        print_error("gantry: " + limits.error().str());
        return kShellFailure;
    }
    auto sinks = Sinks::open(loop_, job_);
    if (!sinks) {
        print_error("gantry: " + sinks.error().str());
        return kShellFailure;
    }
    sinks_ = std::move(*sinks);
    if (job_.input.source != Input::Source::kNone &&
        std::any_of(job_.tasks.begin(), job_.tasks.end(),
                    [this](const Task& task) { return receives_input(task); })) {
        auto input = InputFeeder::open(loop_, job_.input);
        if (!input) {
            print_error("gantry: " + input.error().str());
            return kShellFailure;
        }
        input_ = std::move(*input);
    }
    if (auto watched = watch_supervisor(); !watched) {
        print_error("gantry: shell: " + watched.error().str());
        return kShellFailure;
    }
    watch_terminals();

    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD})
        signals_.add(signal);
    wait_signal();

    if (!start_pmix(*paths))
        return *failure_code_;
    const bool started = start_tasks(*paths, file_limit.original());
    starting_ = false;
    if (started)
        send_record({.kind = records::Record::Kind::kStarted});
    if (input_ && !killing_)
        input_->start();
    start_time_limit();
    asio::post(loop_, [this] { reap(); });  // a task may have ended before SIGCHLD was seen
    loop_.run();
    pmix_mailbox_->close();
    pmix_.reset();

    // What the tasks left running (a `cmd &`, a daemon) ends with the job.
    if (containment_)
        containment_->end();
    sinks_->flush();
    if (abort_code_)
        return *abort_code_;
    if (job_.fronted_by_task_zero && task_zero_status_)
        return exit_code_of(*task_zero_status_);
    return failure_code_.value_or(0);
}

// Every app's command is found before any task starts: one message per
// app that cannot run, and nothing runs.
std::optional<std::vector<std::string>> JobRun::find_commands() {
    std::vector<std::string> paths;
    paths.reserve(job_.tasks.size());
    std::map<std::string, CommandPath> found;  // by name, search path and directory
    std::set<std::uint32_t> reported;
    for (const Task& task : job_.tasks) {
        const std::string name = task.argv.empty() ? std::string() : task.argv[0];
        const std::string_view search_path = search_path_of(task.env);
        std::string key = name;
        key.append(1, '\0').append(search_path).append(1, '\0').append(task.cwd);
        auto known = found.find(key);
        if (known == found.end())
            known = found.emplace(std::move(key), find_command(name, search_path, task.cwd)).first;
        const CommandPath& command = known->second;
        if (command.error != 0 && reported.insert(task.app).second) {
            print_error("gantry: " + app_name(task.app) + ": " + name + ": " +
                        std::strerror(command.error));
            if (!failure_code_)
                failure_code_ = exit_code_of_start_error(command.error);
        }
        paths.push_back(command.path);
    }
    if (failure_code_)
        return std::nullopt;
    return paths;
}

// A soft limit above the hard one cannot be set: said before anything starts.
Status JobRun::check_soft_limits() const {
    for (const auto& [resource, value] : job_.soft_limits) {
        rlimit limit{};
        if (::getrlimit(resource, &limit) != 0)
            return Error("--rlimit", "no resource " + std::to_string(resource) + " on this node");
        if (limit.rlim_max != RLIM_INFINITY && (value == RLIM_INFINITY || value > limit.rlim_max))
            return Error("--rlimit", "the soft limit " + limit_text(value) + " of " +
                                         resource_name(resource) + " is above its hard limit " +
                                         limit_text(limit.rlim_max));
    }
    return {};
}

bool JobRun::receives_input(const Task& task) const {
    return job_.input.source != Input::Source::kNone && job_.input.ranks.contains(task.rank);
}

// Waits for control messages on the supervisor's socket, and kills the job
// when the socket fails: the broker is gone.
Status JobRun::watch_supervisor() {
    if (!job_.supervisor_fd)
        return {};
    auto readable = Readiness::watch(loop_, *job_.supervisor_fd, Readiness::Direction::kRead);
    if (!readable)
        return readable.error();
    supervisor_readable_.emplace(std::move(*readable));
    sinks_->supervisor()->on_failure([this] {
        lose_supervisor("gantry: lost the connection to the instance: killing the job");
    });
    wait_supervisor();
    return {};
}

// A reader of gantry's stdout or stderr that has gone ends the job as it
// would end a pipeline's writer (`gantry run yes | head -1`), rather than
// letting the tasks run on with their output dropped.
void JobRun::watch_terminals() {
    Sink* const out = sinks_->standard_output();
    Sink* const err = sinks_->standard_error();
    if (out)
        out->on_failure([this, out] {
            if (out->failure() == EPIPE)
                output_closed("stdout");
        });
    if (err && err != out)
        err->on_failure([this, err] {
            if (err->failure() == EPIPE)
                output_closed("stderr");
        });
}

// gantry-<shell's pid>-<job id>: unique on the node while the shell lives,
// and it says whose it is to whoever lists the cgroups.
std::string JobRun::cgroup_name() const {
    return job_cgroup_name(::getpid(), job_.id);
}

// True when every task has started.
bool JobRun::start_tasks(const std::vector<std::string>& paths, std::optional<rlim_t> nofile) {
    tasks_.reserve(job_.tasks.size());
    live_.reserve(job_.tasks.size());
    task_of_rank_.reserve(job_.tasks.size());
    task_of_pid_.reserve(job_.tasks.size());
    Fd dev_null;
    if (!std::all_of(job_.tasks.begin(), job_.tasks.end(),
                     [this](const Task& task) { return input_ && receives_input(task); })) {
        auto opened = at_least(Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)), 4);
        if (!opened || !*opened) {
            fail(kShellFailure, "gantry: shell: cannot open /dev/null");
            return false;
        }
        dev_null = std::move(*opened);
    }
    // Supervised, the broker does what a watcher would when the shell dies
    // (src/broker/exec.h): one process fewer to start for every job.
    auto containment =
        Containment::start(cgroup_name(), job_.job_cgroup, !job_.supervisor_fd.has_value());
    if (!containment) {
        fail(kShellFailure, "gantry: " + containment.error().str());
        return false;
    }
    containment_ = std::move(*containment);
    if (pmix_)
        containment_->add_directory(pmix::server_directory_of(::getpid()));
    Spawner spawner(job_, nofile,
                    CgroupFds{containment_->cgroup_dir_fd(), containment_->cgroup_procs()});
    const BlockedSignals blocked;
    for (std::size_t i = 0; i < job_.tasks.size(); ++i) {
        const Task& task = job_.tasks[i];
        auto plumbing = make_plumbing(task);
        if (!plumbing) {
            fail(kShellFailure,
                 "gantry: task " + task_name(task) + ": " + plumbing.error().message());
            kill_job();
            return false;
        }
        const TaskFds fds{plumbing->task_in ? plumbing->task_in.get() : dev_null.get(),
                          plumbing->task_out.get(),
                          plumbing->task_err ? plumbing->task_err.get() : plumbing->task_out.get(),
                          plumbing->task_pmi ? plumbing->task_pmi.get() : -1};
        std::vector<std::string> pmix_env;
        if (pmix_) {
            auto env = pmix_->task_environment(task.rank);
            if (!env) {
                fail(kShellFailure, "gantry: task " + task_name(task) + ": " + env.error().str());
                kill_job();
                return false;
            }
            pmix_env = pmix_variables(task, std::move(*env));
        }
        const StartResult started = spawner.start(task, paths[i], fds, pmix_env);
        if (started.failed != StartStep::kNone) {
            if (plumbing->receiver)
                input_->drop(*plumbing->receiver);
            report_start_failure(task, started);
            kill_job();
            return false;
        }
        RunningTask& running = tasks_.emplace_back(task, job_.output, *sinks_, i);
        running.pid = started.pid;
        running.stdin_receiver = plumbing->receiver;
        running.live_slot = live_.size();
        live_.push_back(tasks_.size() - 1);
        task_of_rank_.emplace(task.rank, tasks_.size() - 1);
        task_of_pid_.emplace(running.pid, tasks_.size() - 1);
        containment_->add_group(running.pid);
        watch(running, *plumbing);
    }
    return true;
}

// Merged (--merge-stderr-to-stdout), the task's stderr is its stdout's
// pipe, as Open MPI makes it: one pipe keeps the order of its writes, which
// two pipes read in turns would not.
Result<Plumbing> JobRun::make_plumbing(const Task& task) {
    const bool merged = job_.output.merge_stderr;
    auto out = make_pipe();
    if (!out)
        return out.error();
    std::optional<Pipe> err;
    if (!merged) {
        auto made = make_pipe();
        if (!made)
            return made.error();
        err.emplace(std::move(*made));
    }
    std::optional<Pipe> pmi;
    if (job_.serve_pmi1) {
        auto made = make_socket_pair();
        if (!made)
            return made.error();
        pmi.emplace(std::move(*made));
    }
    Plumbing plumbing;
    for (auto [from, to] : {std::pair{&out->write, &plumbing.task_out},
                            std::pair{err ? &err->write : nullptr, &plumbing.task_err},
                            std::pair{pmi ? &pmi->write : nullptr, &plumbing.task_pmi}}) {
        if (!from)
            continue;
        auto moved = at_least(std::move(*from), 4);
        if (!moved)
            return moved.error();
        *to = std::move(*moved);
    }
    plumbing.shell_out = std::move(out->read);
    if (err)
        plumbing.shell_err = std::move(err->read);
    if (pmi)
        plumbing.shell_pmi = std::move(pmi->read);
    if (input_ && receives_input(task)) {
        auto receiver = input_->add_receiver();
        if (!receiver)
            return receiver.error();
        plumbing.task_in = std::move(receiver->task_end);
        plumbing.receiver = receiver->id;
    }
    return plumbing;
}

void JobRun::report_start_failure(const Task& task, const StartResult& start) {
    const std::string reason = std::strerror(start.error);
    const std::string who = "gantry: task " + task_name(task) + ": ";
    switch (start.failed) {
        case StartStep::kExec:
            fail(exit_code_of_start_error(start.error),
                 "gantry: " + app_name(task.app) + ": " + task.argv[0] + ": " + reason);
            return;
        case StartStep::kClone:
            fail(kShellFailure, who + "cannot start a process: " + reason);
            return;
        case StartStep::kCgroup:
            fail(kShellFailure, who + "cannot join the job's cgroup " +
                                    quote(containment_->cgroup_dir()) + ": " + reason);
            return;
        case StartStep::kAffinity:
            fail(kShellFailure,
                 who + "cannot bind to cpus " + task.cpus_os.encode() + ": " + reason);
            return;
        case StartStep::kProcessGroup:
            fail(kShellFailure, who + "cannot make a process group: " + reason);
            return;
        case StartStep::kStdio:
            fail(kShellFailure, who + "cannot set up stdin, stdout, stderr and PMI: " + reason);
            return;
        case StartStep::kDirectory:
            fail(kShellFailure,
                 who + "cannot change directory to " + quote(task.cwd) + ": " + reason);
            return;
        case StartStep::kLimit:
            fail(kShellFailure, who + "cannot set resource limits: " + reason);
            return;
        case StartStep::kNone:
            return;
    }
}

void JobRun::watch(RunningTask& task, Plumbing& plumbing) {
    task.out.pipe.emplace(loop_, plumbing.shell_out.release());
    if (plumbing.shell_err)
        task.err.pipe.emplace(loop_, plumbing.shell_err.release());
    // The shell's own ends: reads and writes on them never block.
    for (TaskStream* stream : {&task.out, &task.err}) {
        if (!stream->pipe)
            continue;
        stream->pipe->non_blocking(true);
        ++open_streams_;
        wait_readable(task, *stream);
    }
    if (!plumbing.shell_pmi)
        return;
    task.pmi.socket.emplace(loop_, plumbing.shell_pmi.release());
    task.pmi.socket->non_blocking(true);
    wait_pmi(task);
}

void JobRun::wait_readable(RunningTask& task, TaskStream& stream) {
    stream.waiting = true;
    stream.pipe->async_wait(Descriptor::wait_read,
                            [this, &task, &stream](const asio::error_code& error) {
                                stream.waiting = false;
                                if (!error)
                                    read_stream(task, stream);
                            });
}

// Reads again on the next turn of the loop, or once `when_room` has room.
void JobRun::schedule_read(RunningTask& task, TaskStream& stream, Sink* when_room) {
    stream.scheduled = true;
    auto resume = [this, &task, &stream] {
        stream.scheduled = false;
        read_stream(task, stream);
    };
    if (when_room)
        when_room->when_room(std::move(resume));
    else
        asio::post(loop_, std::move(resume));
}

// Reads until the pipe is empty, the sink is full (resumed when it has
// room: the task blocks in write meanwhile), or this pipe has had its turn.
// Once the task has exited, an empty pipe is closed: a child of the task
// may still hold it open, and the job does not wait for that child.
void JobRun::read_stream(RunningTask& task, TaskStream& stream) {
    for (int reads = 0; stream.pipe; ++reads) {
        if (Sink* full = stream.full_sink()) {
            schedule_read(task, stream, full);
            return;
        }
        if (reads == kReadsPerTurn) {
            schedule_read(task, stream, nullptr);
            return;
        }
        const ssize_t n = ::read(stream.pipe->native_handle(), buffer_.data(), buffer_.size());
        if (n > 0) {
            stream.add({buffer_.data(), static_cast<std::size_t>(n)}, scratch_);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN && !task.reaped) {
            wait_readable(task, stream);
            return;
        } else {
            close_stream(stream);  // end of file, or empty after the task's exit
            return;
        }
    }
}

// What the task wrote before it exited is read at once (within the sink's
// bound), rather than when the pipe next reports readable.
void JobRun::drain_after_exit(RunningTask& task, TaskStream& stream) {
    if (!stream.pipe || stream.scheduled)
        return;  // closed, or a read to come closes it
    if (stream.waiting)
        stream.pipe->cancel();
    read_stream(task, stream);
}

void JobRun::close_stream(TaskStream& stream) {
    stream.finish(scratch_);  // the last line, even without newline
    stream.pipe.reset();      // a pending wait completes as cancelled
    --open_streams_;
    finish_if_done();
}

void JobRun::wait_pmi(RunningTask& task) {
    task.pmi.socket->async_wait(Descriptor::wait_read,
                                [this, &task](const asio::error_code& error) {
                                    if (!error)
                                        read_pmi(task);
                                });
}

void JobRun::read_pmi(RunningTask& task) {
    while (task.pmi.socket) {
        const ssize_t n = ::read(task.pmi.socket->native_handle(), buffer_.data(), buffer_.size());
        if (n > 0) {
            handle(task,
                   pmi_.receive(task.task.rank, {buffer_.data(), static_cast<std::size_t>(n)}));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            wait_pmi(task);
            return;
        } else {
            close_pmi(task);
            return;
        }
    }
}

void JobRun::handle(RunningTask& from, pmi::Effects effects) {
    send_replies(effects.replies);
    // The owner may complete the barrier at once (the local one does), so
    // after the replies to what came before it.
    if (effects.local_barrier)
        hand_over_barrier(std::move(effects.local_barrier->puts),
                          [this](const pmi::KeyValues& merged) { complete_barrier(merged); });
    if (effects.protocol_error) {
        say("gantry: task " + task_name(from.task) + ": " + *effects.protocol_error);
        if (!from.reaped)
            ::killpg(from.pid, SIGKILL);
    }
    if (effects.abort_exit_code)
        aborted(effects.abort_rank.value_or(from.task.rank), *effects.abort_exit_code, "PMI abort");
}

// MPI_Abort: the job ends at once with the task's code. `how`: the call,
// as the message names it.
void JobRun::aborted(std::uint32_t rank, int exit_code, std::string_view how) {
    if (abort_code_)
        return;
    const auto aborting = task_of_rank_.find(rank);
    const std::string who = aborting != task_of_rank_.end()
                                ? task_name(tasks_[aborting->second].task)
                                : std::to_string(rank) + " (" + job_.hostname + ")";
    abort_code_ = exit_code;
    if (!failure_code_)
        failure_code_ = exit_code;  // the tasks killed now are not the failure
    say("gantry: task " + who + " called MPI_Abort / " + std::string(how) + " with exit code " +
        std::to_string(exit_code));
    kill_job();
}

// Each barrier goes to the owner, or through the supervisor to the
// instance, and its answer to `complete`.
void JobRun::hand_over_barrier(pmi::KeyValues puts,
                               std::function<void(const pmi::KeyValues&)> complete) {
    barriers_.push_back(std::move(complete));
    if (job_.supervisor_fd && job_.pmi_through_supervisor)
        send_record(
            {.kind = records::Record::Kind::kFence, .bytes = records::encode_key_values(puts)});
    else
        pmi_owner_->barrier(std::move(puts), [this](const pmi::KeyValues& merged) {
            complete_next_barrier(merged);
        });
}

void JobRun::complete_next_barrier(const pmi::KeyValues& merged_puts) {
    if (barriers_.empty()) {
        say("gantry: shell: a barrier was completed that nobody is in");
        return;
    }
    auto complete = std::move(barriers_.front());
    barriers_.pop_front();
    complete(merged_puts);
}

// The key a node's part of a PMIx fence travels under: its first rank's.
constexpr std::string_view kPmixFencePrefix = "pmix.";

bool JobRun::start_pmix(const std::vector<std::string>& paths) {
    if (job_.serve_pmix == Job::Pmix::kNever || job_.tasks.empty())
        return true;
    if (job_.serve_pmix == Job::Pmix::kWhenClient) {
        const std::set<std::string> programs(paths.begin(), paths.end());
        if (std::none_of(programs.begin(), programs.end(),
                         [](const std::string& path) { return may_be_pmix_client(path); }))
            return true;
    }
    const pmi::JobInfo pmi = pmi_info_of(job_);
    pmix::JobInfo info;
    info.nspace = pmi.kvsname;
    info.universe_size = pmi.universe_size;
    info.app_of_rank = pmi.appnum_of_rank;
    info.app_of_rank.resize(pmi.size, 0);
    if (job_.node_names.empty()) {
        info.node_names = {job_.hostname.empty() ? std::string("localhost") : job_.hostname};
        info.node_of_rank.assign(info.app_of_rank.size(), 0);
    } else {
        info.node_names = job_.node_names;
        info.node_of_rank = job_.node_of_rank;
        info.node = job_.node_id;
    }
    for (const Task& task : job_.tasks)
        info.bindings.emplace(task.rank, task.cpus_os);

    const std::shared_ptr<PmixMailbox> mailbox = pmix_mailbox_;
    pmix::Events events;
    events.connected = [mailbox](std::uint32_t rank) { mailbox->connected(rank); };
    events.finalized = [mailbox](std::uint32_t rank) { mailbox->finalized(rank); };
    events.abort = [this, mailbox](std::uint32_t rank, int status, const std::string&) {
        mailbox->post([this, rank, status] { aborted(rank, status, "PMIx_Abort"); });
    };
    events.fence = [this, mailbox](std::string data, pmix::Events::FenceDone done) {
        mailbox->post([this, data = std::move(data), done = std::move(done)]() mutable {
            pmix_fence(std::move(data), std::move(done));
        });
    };
    events.direct_modex = [this, mailbox](std::uint32_t rank, std::string key,
                                          pmix::Events::ModexDone done) {
        mailbox->post([this, rank, key = std::move(key), done = std::move(done)]() mutable {
            ask_modex(rank, std::move(key), std::move(done));
        });
    };
    auto started = pmix::Job::start(info, std::move(events));
    if (!started) {
        fail(kShellFailure, "gantry: shell: " + started.error().str());
        return false;
    }
    pmix_ = std::move(*started);
    return true;
}

// What the server gives a task, and the Open MPI settings its own mpirun
// would give, but those the task's environment has already: the user's.
// Brokers posing as nodes of one
// machine (`gantry start --test-size`) each keep Open MPI's shared-memory
// files in the job's own directory (their names hold the machine's host
// name and the task's local rank, alike on every such node), and reach
// each other over loopback.
std::vector<std::string> JobRun::pmix_variables(const Task& task,
                                                std::vector<std::string> from_server) {
    if (!job_.hostname.empty() && job_.hostname != local_hostname()) {
        from_server.push_back("OMPI_MCA_btl_vader_backing_directory=" + pmix_->directory());
        // The other nodes are this machine: reached over loopback.
        from_server.push_back("OMPI_MCA_btl_tcp_if_include=lo");
    }
    // More tasks than cpus: Open MPI's waits then yield the cpu rather than
    // spin, as its own mpirun tells it on an oversubscribed node.
    if (job_.tasks.size() > std::thread::hardware_concurrency())
        from_server.push_back("OMPI_MCA_mpi_yield_when_idle=1");
    std::erase_if(from_server, [&task](const std::string& variable) {
        const std::string_view name = std::string_view(variable).substr(0, variable.find('=') + 1);
        return name.starts_with("OMPI_MCA_") &&
               std::any_of(task.env.begin(), task.env.end(),
                           [name](const std::string& entry) { return entry.starts_with(name); });
    });
    return from_server;
}

// Every task of this node is in a PMIx fence: its data goes to the owner as
// one put, and every node's come back, concatenated for the library.
void JobRun::pmix_fence(std::string data, pmix::Events::FenceDone done) {
    const std::string key = std::string(kPmixFencePrefix) + std::to_string(job_.tasks.front().rank);
    pmi::KeyValues puts{{key, base64_encode(data)}};
    hand_over_barrier(std::move(puts), [done = std::move(done)](const pmi::KeyValues& merged) {
        std::string all;
        for (const auto& [name, value] : merged) {
            if (!name.starts_with(kPmixFencePrefix))
                continue;
            auto part = base64_decode(value);
            if (!part) {
                done(std::nullopt);
                return;
            }
            all += *part;
        }
        done(std::move(all));
    });
}

// A task's get of what a task of another node put, before any fence: that
// node's shell is asked through the supervisor. Without one (a job of one
// node) there is no such task.
void JobRun::ask_modex(std::uint32_t rank, std::string key, pmix::Events::ModexDone done) {
    const bool elsewhere = rank < job_.node_of_rank.size() &&
                           job_.node_of_rank[rank] != job_.node_id &&
                           job_.node_of_rank[rank] < job_.map_node_of_node.size();
    if (!elsewhere || !job_.supervisor_fd || !job_.pmi_through_supervisor || supervisor_lost_) {
        done(std::nullopt);
        return;
    }
    if (key.size() > records::kMaxKey)
        key.clear();  // no PMIx key is that long: any data will do
    if (modex_asked_.add(rank, key, std::move(done)))
        send_modex_request(rank, key);
}

void JobRun::send_modex_request(std::uint32_t rank, const std::string& key) {
    send_record({.kind = records::Record::Kind::kModexRequest,
                 .rank = rank,
                 .bytes = key,
                 .node = job_.map_node_of_node[job_.node_of_rank[rank]]});
}

void JobRun::answer_modex(std::uint32_t rank, const std::optional<std::string>& data) {
    if (const auto next = modex_asked_.answer(rank, data))
        send_modex_request(rank, *next);
}

// Another node asks for what task `rank` of this one put, once it has put
// `key`. The library says nothing when a task commits, so a key not there
// yet is looked for again, sooner at first, until the task has ended.
void JobRun::serve_modex(std::uint32_t rank, std::string key) {
    if (try_serve_modex(rank, key))
        return;
    auto& serving = modex_waiting_.emplace_back(
        ModexServe{rank, std::move(key), asio::steady_timer(loop_), std::chrono::milliseconds(1)});
    serve_modex_later(serving);
}

void JobRun::serve_modex_later(ModexServe& serving) {
    serving.timer.expires_after(serving.wait);
    serving.wait = std::min(serving.wait * 2, std::chrono::milliseconds(50));
    serving.timer.async_wait([this, &serving](const std::error_code& error) {
        if (error)
            return;
        if (!try_serve_modex(serving.rank, serving.key)) {
            serve_modex_later(serving);
            return;
        }
        modex_waiting_.remove_if([&serving](const ModexServe& s) { return &s == &serving; });
    });
}

// Whether the request is answered: with the task's data once it has the
// key, or with nothing when it never will.
bool JobRun::try_serve_modex(std::uint32_t rank, const std::string& key) {
    const auto task = task_of_rank_.find(rank);
    if (!pmix_ || task == task_of_rank_.end()) {
        send_record({.kind = records::Record::Kind::kNoModex, .rank = rank});
        return true;
    }
    if (!key.empty() && !pmix_->has_key(rank, key)) {
        if (!tasks_[task->second].reaped)
            return false;
        send_record({.kind = records::Record::Kind::kNoModex, .rank = rank});
        return true;
    }
    const std::shared_ptr<PmixMailbox> mailbox = pmix_mailbox_;
    pmix_->serve_modex(rank, [this, mailbox, rank](std::optional<std::string> data) {
        mailbox->post([this, rank, data = std::move(data)]() mutable {
            if (data && data->size() <= records::kMaxLength)
                send_record({.kind = records::Record::Kind::kModex,
                             .rank = rank,
                             .bytes = std::move(*data)});
            else
                send_record({.kind = records::Record::Kind::kNoModex, .rank = rank});
        });
    });
    return true;
}

void JobRun::send_replies(const std::vector<pmi::Reply>& replies) {
    for (const pmi::Reply& reply : replies)
        if (const auto to = task_of_rank_.find(reply.rank); to != task_of_rank_.end())
            send_pmi(tasks_[to->second], reply.line);
}

void JobRun::complete_barrier(const pmi::KeyValues& merged_puts) {
    auto effects = pmi_.barrier_complete(merged_puts);
    if (!effects) {
        say("gantry: shell: " + effects.error().str());  // an owner that answered twice
        return;
    }
    send_replies(effects->replies);
}

void JobRun::send_pmi(RunningTask& task, std::string_view line) {
    if (!task.pmi.socket)
        return;
    task.pmi.unsent.append(line);
    write_pmi(task);
}

void JobRun::write_pmi(RunningTask& task) {
    PmiConnection& pmi = task.pmi;
    while (!pmi.unsent.empty() && pmi.socket) {
        const ssize_t n = ::send(pmi.socket->native_handle(), pmi.unsent.data(), pmi.unsent.size(),
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0) {
            pmi.unsent.erase(0, static_cast<std::size_t>(n));
        } else if (errno == EAGAIN) {
            if (!pmi.waiting_writable) {
                pmi.waiting_writable = true;
                pmi.socket->async_wait(Descriptor::wait_write,
                                       [this, &task](const asio::error_code& error) {
                                           task.pmi.waiting_writable = false;
                                           if (!error)
                                               write_pmi(task);
                                       });
            }
            return;
        } else if (errno != EINTR) {
            pmi.unsent.clear();  // the task is gone
        }
    }
}

void JobRun::close_pmi(RunningTask& task) {
    if (!task.pmi.socket)
        return;
    task.pmi.socket.reset();
    task.pmi.unsent.clear();
    pmi_.disconnected(task.task.rank);
}

void JobRun::wait_signal() {
    signals_.async_wait([this](const asio::error_code& error, int signal) {
        if (error)
            return;
        on_signal(signal);
        wait_signal();
    });
}

void JobRun::on_signal(int signal) {
    if (signal == SIGCHLD) {
        reap();
        return;
    }
    if (job_.fronted_by_task_zero) {
        const auto zero = std::find_if(tasks_.begin(), tasks_.end(), [](const RunningTask& task) {
            return task.task.rank == 0 && task.pid > 0 && !task.reaped;
        });
        if (zero != tasks_.end()) {
            ::killpg(zero->pid, signal);
            return;
        }
    }
    if (signal == SIGINT) {
        const auto now = Clock::now();
        if (last_interrupt_ && now - *last_interrupt_ < kInterruptWindow) {
            if (!interrupt_killed_)
                say("gantry: killing the job (second interrupt)");
            interrupt_killed_ = true;
            kill_job();
            return;
        }
        last_interrupt_ = now;
        say("gantry: interrupt (one more within 2 s kills the job)");
    }
    signal_tasks(signal);
}

// A task's process group holds the task and the children it has not moved
// elsewhere; only tasks not reaped yet are signalled, so a group id never
// outlives its task here.
void JobRun::signal_tasks(int signal) {
    for (const std::size_t index : live_)
        ::killpg(tasks_[index].pid, signal);
}

void JobRun::start_time_limit() {
    const auto limit = job_.limits.time_limit;
    if (limit <= std::chrono::milliseconds::zero() || live_.empty())
        return;
    time_limit_.expires_after(limit);
    time_limit_.async_wait([this, limit](const asio::error_code& error) {
        if (error)
            return;
        say("gantry: job hit its time limit of " + format_duration(limit));
        terminate_job();
    });
}

void JobRun::wait_supervisor() {
    supervisor_readable_->async_wait([this](const asio::error_code& error) {
        if (!error)
            read_supervisor();
    });
}

// One read per wake-up: a broker that talks without end cannot keep the
// loop from the tasks.
void JobRun::read_supervisor() {
    if (supervisor_lost_)
        return;
    char bytes[512];
    ssize_t n;
    do {
        n = ::recv(*job_.supervisor_fd, bytes, sizeof bytes, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        controls_.append({bytes, static_cast<std::size_t>(n)});
        obey_controls();
    } else if (n < 0 && errno == EAGAIN) {
        wait_supervisor();
    } else if (n == 0) {
        lose_supervisor("gantry: the instance closed the connection: killing the job");
    } else {
        lose_supervisor("gantry: lost the connection to the instance: " +
                        std::string(std::strerror(errno)) + ": killing the job");
    }
}

void JobRun::obey_controls() {
    while (true) {
        auto control = controls_.next();
        if (!control) {
            // A broker that says nonsense cannot be trusted to end the job.
            lose_supervisor("gantry: from the instance: " + control.error().str() +
                            ": killing the job");
            return;
        }
        if (!*control)
            break;
        obey(**control);
    }
    wait_supervisor();
}

void JobRun::obey(const records::Control& control) {
    switch (control.kind) {
        case records::Control::Kind::kSignal:
            signal_tasks(control.signal);
            return;
        case records::Control::Kind::kTerminate:
            terminate_job();
            return;
        case records::Control::Kind::kFence: {
            auto merged = records::parse_key_values(control.bytes);
            if (!merged) {
                lose_supervisor("gantry: from the instance: " + merged.error().str() +
                                ": killing the job");
                return;
            }
            complete_next_barrier(*merged);
            return;
        }
        case records::Control::Kind::kModexRequest:
            serve_modex(control.rank, control.bytes);
            return;
        case records::Control::Kind::kModex:
            answer_modex(control.rank, control.bytes);
            return;
        case records::Control::Kind::kNoModex:
            answer_modex(control.rank, std::nullopt);
            return;
    }
}

// Tasks never outlive their broker: with nobody to report to or to stop
// them, they are killed. The line goes out in case only the broker's
// reading end is gone.
void JobRun::lose_supervisor(const std::string& line) {
    if (supervisor_lost_)
        return;
    supervisor_lost_ = true;
    say(line);
    kill_job();
}

void JobRun::send_record(const records::Record& record) {
    if (Sink* supervisor = sinks_->supervisor())
        supervisor->write(records::encode(record));
}

// Reaps what has exited. waitpid is called on the job's own tasks only: the
// shell may live in a process with other children (a test program, a
// broker). waitid(WNOWAIT) says which child has exited without reaping it,
// so the usual case costs one call per task, not a look at every task.
void JobRun::reap() {
    while (!live_.empty()) {
        siginfo_t exited{};
        if (::waitid(P_ALL, 0, &exited, WEXITED | WNOHANG | WNOWAIT) != 0 || exited.si_pid == 0)
            break;
        const auto task = task_of_pid_.find(exited.si_pid);
        if (task == task_of_pid_.end()) {
            reap_each();  // someone else's child is first in line: ask each task
            break;
        }
        if (!reap(tasks_[task->second]))
            break;
    }
    finish_if_done();
}

void JobRun::reap_each() {
    for (std::size_t slot = live_.size(); slot-- > 0;)
        reap(tasks_[live_[slot]]);
}

bool JobRun::reap(RunningTask& task) {
    int wait_status = 0;
    if (::waitpid(task.pid, &wait_status, WNOHANG) != task.pid)
        return false;
    // Out of the live tasks: the last one takes its slot.
    const std::size_t last = live_.back();
    live_[task.live_slot] = last;
    tasks_[last].live_slot = task.live_slot;
    live_.pop_back();
    task_of_pid_.erase(task.pid);
    task_exited(task, wait_status);
    return true;
}

void JobRun::task_exited(RunningTask& task, int wait_status) {
    task.reaped = true;
    drain_after_exit(task, task.out);
    drain_after_exit(task, task.err);
    read_pmi(task);  // a finalize sent just before exit counts
    close_pmi(task);
    if (task.stdin_receiver)
        input_->drop(*task.stdin_receiver);
    // After what its pipes held, before the messages its end causes.
    send_record(
        {.kind = records::Record::Kind::kExit, .rank = task.task.rank, .wait_status = wait_status});

    const std::uint32_t rank = task.task.rank;
    if (rank == 0)
        task_zero_status_ = wait_status;
    // Its peers would wait for it in a barrier forever.
    const bool left_pmi_peers =
        ((pmi_.initialized(rank) && !pmi_.finalized(rank)) || pmix_mailbox_->in_session(rank)) &&
        !live_.empty();
    if (exit_code_of(wait_status) != 0) {
        fail(exit_code_of(wait_status),
             "gantry: task " + task_name(task.task) + " " + describe_end(wait_status));
        if (job_.limits.kill_on_bad_exit || left_pmi_peers)
            terminate_job();
    } else if (left_pmi_peers) {
        fail(kShellFailure, "gantry: task " + task_name(task.task) +
                                " exited without finalizing PMI (MPI_Finalize)");
        terminate_job();
    }
}

// Only the first failure in time order sets the exit code and is reported:
// what the teardown it starts kills afterwards is no news.
void JobRun::fail(int exit_code, const std::string& line) {
    if (failure_code_)
        return;
    failure_code_ = exit_code;
    if (!job_.fronted_by_task_zero)
        say(line);
}

// The job ends as a pipeline's writer would: SIGPIPE, and SIGKILL after the
// kill timeout for a task that ignores it; 141 unless a failure came first.
// The line reaches stderr only when stderr is not what was closed.
void JobRun::output_closed(const std::string& stream) {
    if (output_closed_)
        return;
    output_closed_ = true;
    if (!failure_code_)
        failure_code_ = kClosedOutput;
    say("gantry: " + stream + " was closed: ending the job");
    end_job(SIGPIPE);
}

void JobRun::terminate_job() {
    end_job(SIGTERM);
}

// `first_signal` to every task, then SIGKILL after the kill timeout.
void JobRun::end_job(int first_signal) {
    if (terminating_ || killing_)
        return;
    terminating_ = true;
    signal_tasks(first_signal);
    kill_timer_.expires_after(job_.limits.kill_timeout);
    kill_timer_.async_wait([this](const asio::error_code& error) {
        if (!error)
            kill_job();
    });
}

void JobRun::kill_job() {
    killing_ = true;
    signal_tasks(SIGKILL);
}

// The job ends when every task is reaped and its output passed on.
void JobRun::finish_if_done() {
    if (starting_ || !live_.empty() || open_streams_ > 0)
        return;
    time_limit_.cancel();
    kill_timer_.cancel();
    loop_.stop();
}

void JobRun::say(const std::string& line) {
    sinks_->messages().write(line + "\n");
}

// A line before the loop and its sinks exist: on the shell's stderr, or as
// a msg record to the supervisor.
void JobRun::print_error(const std::string& line) const {
    if (!job_.supervisor_fd) {
        write_fully(writable_stdio(2), line + "\n");
        return;
    }
    write_fully(supervisor_io(*job_.supervisor_fd),
                records::encode({.kind = records::Record::Kind::kMessage, .bytes = line + "\n"}));
}

std::string JobRun::task_name(const Task& task) const {
    return std::to_string(task.rank) + " (" + job_.hostname + ")";
}

std::string JobRun::app_name(std::uint32_t app) const {
    std::string command;
    if (app < job_.app_commands.size()) {
        command = job_.app_commands[app];
    } else {
        for (const Task& task : job_.tasks) {
            if (task.app != app)
                continue;
            for (const std::string& arg : task.argv)
                command += (command.empty() ? "" : " ") + arg;
            break;
        }
    }
    return "app " + std::to_string(app) + " (" + command + ")";
}

}  // namespace

int run(const Job& job) {
    JobRun job_run(job);
    return job_run.run();
}

}  // namespace gantry::shell
