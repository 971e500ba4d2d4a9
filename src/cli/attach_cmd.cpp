// `gantry attach`: follow a job of an instance, its output and exceptions as
// they come, with this process's stdin and signals forwarded to it; exit
// with the job's exit code. One process, no threads: poll(2) waits on the
// job's stream, stdin and a pipe that signal handlers write to.
// Reference: docs/commands/attach.md.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/attach.h"
#include "cli/command.h"
#include "cli/instance_client.h"
#include "util/base64.h"
#include "util/file.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  $ id=$(gantry submit sh -c 'echo hello; exit 3')
  $ gantry attach $id; echo $?
  hello
  gantry: task 0 (<host>) exited with exit code 3
  3
  $ gantry attach --label-io $id             # exit 3
  0: hello
  gantry: task 0 (<host>) exited with exit code 3
  $ gantry submit --urgency hold true
  2
  $ gantry cancel 2; gantry attach 2         # exit 1
  gantry: job 2: exception: cancel: canceled by <uid>

Prints the job's output from its start, then as it comes, until the job
ends; attaching again later prints it all again. Stdin goes to the job once
it runs (to the ranks its --input names; rank 0 by default), unless
--no-stdin. SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are sent on to the
job once it runs; a second Ctrl-C within 2 s detaches instead, and the job
goes on. While the job is pending, SIGINT, SIGTERM and SIGHUP detach at once
and leave it queued. When stdout is closed (gantry attach 7 | head -1), the
job gets SIGPIPE, and is canceled if it still runs after its kill timeout.

Exit status: the job's exit code; 1 when the job never ran (canceled while
pending, a dependency failed, lost) or the instance cannot be reached or
refuses (gantry: job 9: no such job); 69 when the instance shut down or the
connection to it was lost before the job ended; 130 after detaching with
Ctrl-C, 128+N after signal N detached it from a pending job; 2 on bad
options or a bad job id.)";

// The signals a front end passes on to its job.
constexpr std::array kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

// A second Ctrl-C within this time detaches.
constexpr auto kDetachWindow = std::chrono::seconds(2);

// How long a signal waits for the job's state before the job is taken for
// pending.
constexpr auto kStateGrace = std::chrono::seconds(2);

// The write end of the live SignalPipe, for its handler.
int g_signal_pipe = -1;

void write_signal_byte(int signal) {
    const int saved_errno = errno;
    const auto byte = static_cast<unsigned char>(signal);
    (void)!::write(g_signal_pipe, &byte, 1);
    errno = saved_errno;
}

// Signals as bytes on a pipe, which poll(2) watches with the sockets: the
// handler does nothing else, so nothing else need be async-signal-safe.
// Signals the process ignores (nohup, a background job's SIGINT) stay
// ignored. The previous handlers come back at the end.
class SignalPipe {
public:
    SignalPipe() {
        if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
            fds_[0] = fds_[1] = -1;
            return;
        }
        g_signal_pipe = fds_[1];
        struct sigaction action {};
        action.sa_handler = write_signal_byte;
        sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < kForwardedSignals.size(); ++i) {
            ::sigaction(kForwardedSignals[i], nullptr, &previous_[i]);
            if (previous_[i].sa_handler != SIG_IGN)
                ::sigaction(kForwardedSignals[i], &action, nullptr);
        }
    }
    ~SignalPipe() {
        if (!ok())
            return;
        for (std::size_t i = 0; i < kForwardedSignals.size(); ++i)
            ::sigaction(kForwardedSignals[i], &previous_[i], nullptr);
        g_signal_pipe = -1;
        ::close(fds_[0]);
        ::close(fds_[1]);
    }
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;

    bool ok() const { return fds_[0] >= 0; }
    int read_end() const { return fds_[0]; }

    // The signals caught since the last call, in the order they came.
    std::vector<int> take() {
        std::vector<int> signals;
        unsigned char bytes[64];
        for (ssize_t n; (n = ::read(fds_[0], bytes, sizeof bytes)) > 0;)
            signals.insert(signals.end(), bytes, bytes + n);
        return signals;
    }

private:
    int fds_[2] = {-1, -1};
    std::array<struct sigaction, kForwardedSignals.size()> previous_{};
};

// The signals that end a front end waiting for a pending job.
bool ends_waiting(int signal) {
    return signal == SIGINT || signal == SIGTERM || signal == SIGHUP;
}

std::string signal_name(int signal) {
    const char* abbrev = ::sigabbrev_np(signal);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

// The length of the --timestamp-output stamp the job shell put at the start
// of `line` ("Wed Nov 25 21:52:50 2026<stdout>:"), 0 when there is none.
std::size_t stamp_length(std::string_view line) {
    constexpr std::size_t kTime = 24;  // ctime's text, without its newline
    constexpr std::size_t kStream = 9;
    if (line.size() < kTime + kStream)
        return 0;
    const std::string_view stream = line.substr(kTime, kStream);
    return stream == "<stdout>:" || stream == "<stderr>:" ? kTime + kStream : 0;
}

// `label` before every line of `bytes`, the last one too when it has no
// newline yet; after the line's time stamp when `stamped`, where `gantry
// run` puts it (as Open MPI puts its tag after the time).
void append_labelled(std::string& out, std::string_view label, std::string_view bytes,
                     bool stamped) {
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        const auto end = newline == std::string_view::npos ? bytes.size() : newline + 1;
        const std::string_view line = bytes.substr(0, end);
        const std::size_t stamp = stamped ? stamp_length(line) : 0;
        out += line.substr(0, stamp);
        out += label;
        out += line.substr(stamp);
        bytes.remove_prefix(end);
    }
}

// One attachment: what has been seen of the job, and where its stdin stands.
class Attachment {
public:
    Attachment(overlay::Client& stream, overlay::Client control,
               std::optional<overlay::Client> stdin_link, std::uint64_t id,
               const AttachOptions& options)
        : stream_(stream),
          control_(std::move(control)),
          stdin_link_(std::move(stdin_link)),
          id_(id),
          label_(options.label_io),
          owns_job_(options.owns_job),
          can_detach_(options.can_detach),
          stdin_(options.forward_stdin ? Stdin::kWaiting : Stdin::kClosed) {}

    int run(SignalPipe& signals);

private:
    // kWaiting until the job starts (job.stdin is for running jobs), kOpen
    // while it runs and stdin has more, kSending while the instance has not
    // answered the last bytes sent (it does once the tasks' side has room:
    // stdin is read no faster than they take it), kClosed after.
    enum class Stdin { kWaiting, kOpen, kSending, kClosed };

    // Each returns the exit code when the attachment ends there.
    std::optional<int> on_reply(const overlay::Reply& reply);
    std::optional<int> on_output(const Json& chunk);
    std::optional<int> on_signal(int signal);
    std::optional<int> leave_pending(int signal);
    std::optional<int> handle_signals();
    void write_output(int fd, std::string_view bytes);
    void output_closed();
    void cancel_after_grace();
    int poll_timeout() const;
    void on_event(const Json& event);
    void on_stdin();
    void send_stdin(std::string_view bytes, bool eof);
    void on_stdin_answer();
    void kill(int signal);
    std::string job() const { return "job " + std::to_string(id_); }

    overlay::Client& stream_;
    overlay::Client control_;                    // signals: the stream holds `stream_`
    std::optional<overlay::Client> stdin_link_;  // stdin, answered as the tasks take it
    std::uint64_t id_;
    bool label_;
    bool stamped_ = false;  // the job's lines start with their time (--timestamp-output)
    bool owns_job_;
    bool can_detach_;
    Stdin stdin_;
    bool state_known_ = false;                      // the job's eventlog so far has come
    bool allocated_ = false;                        // the job has left the queue (its alloc event)
    std::chrono::milliseconds kill_timeout_{5000};  // the job's
    std::optional<int> canceled_on_;                // the signal that canceled the pending job
    bool output_closed_ = false;                    // stdout or stderr failed: the job got SIGPIPE
    std::optional<std::chrono::steady_clock::time_point> cancel_at_;  // if it still runs
    std::optional<std::chrono::steady_clock::time_point> last_interrupt_;
    std::vector<int> unhandled_;  // signals caught before the job's state was known
    std::optional<std::chrono::steady_clock::time_point> first_unhandled_;
    std::string scratch_;  // a chunk's labelled lines
};

int Attachment::run(SignalPipe& signals) {
    const auto request = stream_.send("job.attach", {{"id", id_}});
    if (!request)
        return runtime_failure(request.error());
    for (;;) {
        pollfd ready[] = {
            {stream_.native_handle(), POLLIN, 0},
            {signals.read_end(), POLLIN, 0},
            {stdin_ == Stdin::kOpen ? STDIN_FILENO : -1, POLLIN, 0},  // -1: not polled
            {stdin_ == Stdin::kSending ? stdin_link_->native_handle() : -1, POLLIN, 0},
        };
        // A reply already buffered needs no waiting.
        const bool buffered =
            stream_.has_reply() || (stdin_ == Stdin::kSending && stdin_link_->has_reply());
        if (::poll(ready, std::size(ready), buffered ? 0 : poll_timeout()) < 0 && errno != EINTR)
            return runtime_failure(Error("", std::string("poll: ") + std::strerror(errno)));
        cancel_after_grace();
        const std::vector<int> caught = signals.take();
        unhandled_.insert(unhandled_.end(), caught.begin(), caught.end());
        if (const auto code = handle_signals())
            return *code;
        if (ready[0].revents != 0 || stream_.has_reply()) {
            do {
                const auto reply = stream_.receive();
                if (!reply)
                    return waiting_failure(stream_, reply.error());
                // The stream is this request's alone; a caller's earlier
                // requests on it have had their replies.
                if (reply->id && *reply->id != *request)
                    continue;
                if (const auto code = on_reply(*reply))
                    return *code;
            } while (stream_.has_reply());
            if (const auto code = handle_signals())
                return *code;
        }
        if (ready[2].revents != 0)
            on_stdin();
        else if (stdin_ == Stdin::kSending && (ready[3].revents != 0 || stdin_link_->has_reply()))
            on_stdin_answer();
    }
}

std::optional<int> Attachment::on_reply(const overlay::Reply& reply) {
    if (reply.message)
        return waiting_failure(stream_, overlay::error_of(reply), reply.error_type);
    const Json& result = *reply.result;
    if (const auto jobspec = result.find("jobspec"); jobspec != result.end()) {
        const Json attributes = jobspec->value("attributes", Json::object());
        const auto label_io = attributes.find("label_io");
        label_ = label_ || (label_io != attributes.end() && *label_io == true);
        const auto stamped = attributes.find("timestamp_output");
        stamped_ = stamped != attributes.end() && *stamped == true;
        if (const auto timeout = attributes.find("kill_timeout");
            timeout != attributes.end() && timeout->is_number())
            kill_timeout_ =
                std::chrono::milliseconds(static_cast<std::int64_t>(timeout->get<double>() * 1000));
    }
    if (const auto output = result.find("output"); output != result.end() && output->is_array())
        for (const Json& chunk : *output)
            if (const auto code = on_output(chunk))
                return code;
    if (const auto events = result.find("events"); events != result.end() && events->is_array()) {
        for (const Json& event : *events)
            on_event(event);
        state_known_ = true;  // the first events are the job's whole eventlog so far
    }
    if (!reply.more)  // the job's summary: it is inactive
        return canceled_on_ ? 128 + *canceled_on_ : command_exit_code(result);
    return std::nullopt;
}

std::optional<int> Attachment::on_output(const Json& chunk) {
    auto bytes = data_of(chunk);
    if (!bytes)
        return runtime_failure(
            Error(job(), "bad output from the instance: " + bytes.error().str()));
    const Json rank = chunk.value("rank", Json(-1));
    // Rank -1 is the instance's own: the shell's messages on stderr, the map
    // --display asked for on stdout; unlabelled.
    const bool shell = !rank.is_number_integer() || rank.get<std::int64_t>() < 0;
    const int fd = string_field(chunk, "stream") == "stderr" ? STDERR_FILENO : STDOUT_FILENO;
    if (!label_ || shell) {
        write_output(fd, *bytes);
        return std::nullopt;
    }
    scratch_.clear();
    append_labelled(scratch_, to_compact(rank) + ": ", *bytes, stamped_);
    write_output(fd, scratch_);
    return std::nullopt;
}

void Attachment::write_output(int fd, std::string_view bytes) {
    if (output_closed_ && fd == STDOUT_FILENO)
        return;                         // the rest has nowhere to go
    if (write_all(fd, bytes) == EPIPE)  // its reader is gone
        output_closed();
}

// Like a writer in a pipeline whose reader has gone, the job gets SIGPIPE;
// one that survives it (it ignores SIGPIPE) is canceled after its kill
// timeout.
void Attachment::output_closed() {
    if (output_closed_)
        return;
    output_closed_ = true;
    kill(SIGPIPE);  // it has run: it wrote
    cancel_at_ = std::chrono::steady_clock::now() + kill_timeout_;
}

void Attachment::cancel_after_grace() {
    if (!cancel_at_ || std::chrono::steady_clock::now() < *cancel_at_)
        return;
    cancel_at_.reset();
    (void)control_.call("job.cancel", {{"id", id_}});  // it may have ended meanwhile
}

// Whether a signal means "pass it on" or "stop waiting" depends on whether
// the job has left the queue, which the first events say: signals wait for
// them, kStateGrace at most (an instance that does not answer is left as
// one whose job is pending).
std::optional<int> Attachment::handle_signals() {
    const auto now = std::chrono::steady_clock::now();
    if (unhandled_.empty()) {
        first_unhandled_.reset();
        return std::nullopt;
    }
    if (!first_unhandled_)
        first_unhandled_ = now;
    if (!state_known_ && now - *first_unhandled_ < kStateGrace)
        return std::nullopt;
    const std::vector<int> signals = std::exchange(unhandled_, {});
    first_unhandled_.reset();
    for (const int signal : signals)
        if (const auto code = on_signal(signal))
            return code;
    return std::nullopt;
}

// -1 (wait for ever) unless a cancel is due, or signals wait for the
// job's state.
int Attachment::poll_timeout() const {
    std::optional<std::chrono::steady_clock::time_point> due = cancel_at_;
    if (first_unhandled_ && (!due || *first_unhandled_ + kStateGrace < *due))
        due = *first_unhandled_ + kStateGrace;
    if (!due)
        return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *due - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()) + 1);
}

void Attachment::on_event(const Json& event) {
    const std::string name = string_field(event, "name");
    if (name == "exception") {
        std::cerr << "gantry: " << exception_text(id_, event.value("context", Json::object()))
                  << '\n';
    } else if (name == "alloc") {
        allocated_ = true;
    } else if (name == "start") {  // after its alloc event
        if (stdin_ == Stdin::kWaiting)
            stdin_ = Stdin::kOpen;
    } else if (name == "finish") {
        stdin_ = Stdin::kClosed;  // nobody reads it any more
    }
}

std::optional<int> Attachment::on_signal(int signal) {
    if (!allocated_ && ends_waiting(signal))
        return leave_pending(signal);
    if (signal == SIGINT && !can_detach_) {
        std::cerr << "gantry: " << job() << ": SIGINT sent\n";
    } else if (signal == SIGINT) {
        const auto now = std::chrono::steady_clock::now();
        if (last_interrupt_ && now - *last_interrupt_ < kDetachWindow) {
            std::cerr << "gantry: " << job() << ": detached; it goes on (gantry attach " << id_
                      << " follows it again)\n";
            return kExitDetached;
        }
        last_interrupt_ = now;
        std::cerr << "gantry: " << job() << ": SIGINT sent; one more Ctrl-C within 2 s detaches\n";
    }
    kill(signal);
    return std::nullopt;
}

// A pending job has no tasks to pass a signal to: a front end that owns the
// job cancels it and reports its end (128+N); `gantry attach` detaches.
std::optional<int> Attachment::leave_pending(int signal) {
    if (canceled_on_)
        return std::nullopt;  // the cancel is under way
    if (!owns_job_) {
        std::cerr << "gantry: " << job() << ": " << signal_name(signal)
                  << ": detached; the job stays queued (gantry attach " << id_
                  << " follows it again)\n";
        return 128 + signal;
    }
    std::cerr << "gantry: " << job() << ": " << signal_name(signal)
              << ": canceling the pending job\n";
    canceled_on_ = signal;
    if (const auto reply = control_.call("job.cancel", {{"id", id_}}); !reply)
        fail(reply.error());  // it has left the queue meanwhile: its end comes anyway
    return std::nullopt;
}

void Attachment::kill(int signal) {
    // Not fatal: the job may not run yet, or have ended meanwhile.
    if (const auto reply = control_.call("job.kill", {{"id", id_}, {"signal", signal}}); !reply)
        fail(reply.error());
}

void Attachment::on_stdin() {
    char block[1 << 16];
    const ssize_t n = ::read(STDIN_FILENO, block, sizeof block);
    if (n > 0)
        send_stdin(std::string_view(block, static_cast<std::size_t>(n)), false);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        send_stdin({}, true);  // a stdin that fails to read ends like one at its end
}

void Attachment::send_stdin(std::string_view bytes, bool eof) {
    Json params{{"id", id_}, {"eof", eof}};
    put_data(params, bytes);
    const auto sent = stdin_link_->send("job.stdin", params);
    stdin_ = sent && !eof ? Stdin::kSending : Stdin::kClosed;
}

// An error means nobody takes it any more (the job ended meanwhile, or its
// input comes from a file): stop reading, say nothing.
void Attachment::on_stdin_answer() {
    const auto reply = stdin_link_->receive();
    if (stdin_ == Stdin::kSending)
        stdin_ = reply && !reply->message ? Stdin::kOpen : Stdin::kClosed;
}

}  // namespace

int attach_job(overlay::Client& stream, const std::string& uri, std::uint64_t id,
               const AttachOptions& options) {
    auto control = overlay::Client::connect(uri);
    if (!control)
        return runtime_failure(control.error());
    // A closed stdout is an EPIPE to act on, not the end of this process.
    ::signal(SIGPIPE, SIG_IGN);
    SignalPipe signals;
    if (!signals.ok())
        return runtime_failure(Error("", std::string("pipe: ") + std::strerror(errno)));
    // Stdin has a connection of its own: its answers come when the tasks
    // have room, while signals must go at once.
    std::optional<overlay::Client> stdin_link;
    if (options.forward_stdin) {
        auto link = overlay::Client::connect(uri);
        if (!link)
            return runtime_failure(link.error());
        stdin_link = std::move(*link);
    }
    Attachment attachment(stream, std::move(*control), std::move(stdin_link), id, options);
    return attachment.run(signals);
}

int attach_main(int argc, char** argv) {
    CLI::App app(
        "Print a job's output as it comes, forward stdin and signals to it, and exit with its "
        "exit code.",
        "attach");
    app.footer(std::string(kExamples));
    std::optional<std::string> uri_option;
    std::string id_text;
    AttachOptions options;
    bool no_stdin = false;
    add_uri_option(app, uri_option);
    app.add_option("ID", id_text, "The job's id")->required();
    app.add_flag("-l,--label-io", options.label_io,
                 "Prefix each output line with \"RANK: \" (also when the job was not "
                 "submitted with --label-io)");
    app.add_flag("--no-stdin", no_stdin, "Do not read stdin; the job's stdin stays open");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    options.forward_stdin = !no_stdin;

    const auto id = parse_job_id("attach", id_text);
    if (!id)
        return fail(id.error());
    int exit_code = kExitOk;
    const auto uri = instance_uri(uri_option, exit_code);
    if (!uri)
        return exit_code;
    auto stream = overlay::Client::connect(*uri);
    if (!stream)
        return runtime_failure(stream.error());
    return attach_job(*stream, *uri, *id, options);
}

}  // namespace gantry::cli
