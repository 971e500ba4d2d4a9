// Brokers started on other hosts through a launch agent: ssh by default, or
// any command that takes a host and a command line as ssh does (rsh,
// `ssh -p 2222`, a wrapper). Each broker stays tied to the launcher by its
// agent's standard input and output, which carry the bootstrap (lines, see
// broker/bootstrap.h) and then serve as its lifeline: when the launcher
// closes its end (or dies), the agent passes the end of input on and the
// broker ends. The brokers' lines are read in the launcher's event loop as
// they come, so that it serves the hosts that answered while the others
// are still being reached. Whatever the agent or the broker writes on
// stderr is held while the brokers start, so that a host that cannot be
// reached is told in one line, then passed on as it comes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>

#include "util/error.h"

namespace gantry::overlay {

// The variable that names the launch agent when --launch-agent does not.
inline constexpr std::string_view kLaunchAgentVariable = "GANTRY_LAUNCH_AGENT";

// The agent's words: "ssh -o BatchMode=yes" is {"ssh", "-o", "BatchMode=yes"}
// (split on blanks; no quoting). Error: no word.
Result<std::vector<std::string>> parse_launch_agent(std::string_view text);

// `argv` as one command line for the remote shell that ssh hands it to:
// each word in single quotes unless it is made of safe characters only.
std::string shell_command(const std::vector<std::string>& argv);

// The processes of the agents, one per host, in the order given.
class LaunchedHosts {
public:
    struct Launch {
        std::string host;               // as the user named it
        std::vector<std::string> argv;  // what runs there
    };

    // Starts `agent HOST COMMAND` for each launch, each in a process group of
    // its own (a Ctrl-C at the terminal is the instance's to pass on, not the
    // agents' to die of). Error: an agent that cannot be started.
    //
    // From here on SIGINT, SIGTERM and SIGHUP are blocked in the calling
    // thread (and the threads it starts later), so that one that comes
    // before the event loop handles them (the instance's, which unblocks
    // them) does not end this process while its agents run on.
    static Result<std::unique_ptr<LaunchedHosts>> start(const std::vector<std::string>& agent,
                                                        std::vector<Launch> launches);
    LaunchedHosts(const LaunchedHosts&) = delete;
    LaunchedHosts& operator=(const LaunchedHosts&) = delete;
    ~LaunchedHosts();  // finish(0): whatever still runs is killed

    std::size_t size() const { return hosts_.size(); }
    const std::string& host(std::size_t index) const { return hosts_[index].host; }

    // What becomes of the brokers' lines (read_lines). No handler may
    // destroy the reader.
    struct LineHandlers {
        // Host `index`'s broker wrote `line` (without its newline).
        std::function<void(std::size_t index, const std::string& line)> line;
        // Every host's line is in; the agents' stderr is left to
        // pass_errors_on.
        std::function<void()> done;
        // One line naming the host: an agent that ended first (with the
        // last line it wrote on stderr, as ssh says why), or a host silent
        // for the whole timeout. Nothing is read after it.
        std::function<void(const Error&)> failed;
    };
    class LineReader {
    public:
        virtual ~LineReader() = default;  // stops reading
    };
    // Reads one line from each host's broker in `loop`, as they come,
    // within `timeout` in all.
    std::unique_ptr<LineReader> read_lines(asio::io_context& loop,
                                           std::chrono::milliseconds timeout,
                                           LineHandlers handlers);
    // Writes `text` to the broker of host `index`.
    Status write(std::size_t index, std::string_view text);
    // From now on each agent's stderr goes to this process's as it comes.
    void pass_errors_on();
    // Closes every lifeline, so that the brokers end and their agents with
    // them, and ends at once (SIGTERM to its process group) each agent
    // whose broker never wrote its line: it is still connecting, or its
    // host is silent, and nothing there has anything to wind down. Then
    // finish() waits for the agents.
    void close_lifelines();
    // close_lifelines() if not done yet, waits up to `grace` for the agents
    // to end, then ends those left (SIGTERM to each one's process group,
    // then SIGKILL a second later to every group, whatever an agent left
    // behind), and reaps them.
    void finish(std::chrono::milliseconds grace);

private:
    class Reader;
    void wait_for_an_end(std::chrono::milliseconds timeout) const;

    struct Host {
        std::string host;
        pid_t pid = -1;            // the agent, until reaped
        pid_t group = -1;          // its process group: the agent and what it started
        int input = -1;            // the agent's stdin: what the broker reads
        int output = -1;           // the agent's stdout
        int errors = -1;           // the agent's stderr
        std::string read;          // output not yet taken as a line
        bool answered = false;     // its line is in
        bool terminated = false;   // sent SIGTERM
        std::string error_buffer;  // stderr held while the brokers start
    };
    LaunchedHosts() = default;
    std::string why_ended(Host& host);

    std::vector<Host> hosts_;
    std::thread relay_;
    int relay_stop_ = -1;  // the write end of a pipe that stops the relay
};

}  // namespace gantry::overlay
