// Where the tasks' output goes: the shell's stdout and stderr, and the files
// of --output and --error. Writing never blocks the shell's loop, and the
// bytes waiting for a slow reader are bounded: the readers of the tasks'
// pipes stop while a sink is full, so the tasks block in write instead.
#pragma once

#include <asio/io_context.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shell/io_fd.h"
#include "shell/output.h"
#include "shell/readiness.h"
#include "shell/shell.h"
#include "util/error.h"

namespace gantry::shell {

class Sink : public ByteWriter {
public:
    // Above this many bytes waiting, full() asks the feeders to stop; they
    // resume when half of it is written.
    static constexpr std::size_t kQueueBound = 1 << 20;

    Sink(asio::io_context& loop, IoFd destination);
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;

    // Writes what the destination takes now and queues the rest, in order.
    // A destination that fails (EPIPE: its reader is gone) drops everything
    // from then on.
    void write(std::string_view bytes) override;

    bool full() const { return queued() > kQueueBound; }
    std::size_t queued() const { return queue_.size() - queue_start_; }
    // `resume` runs (posted on the loop) once the queue has room again.
    void when_room(std::function<void()> resume);

    // Writes everything queued, waiting for the destination as long as it
    // needs: the last thing the shell does.
    void flush();

private:
    void write_queue();
    void compact();  // drops the bytes already written from the queue
    void wait_writable();
    void give_room();
    void drop();

    asio::io_context& loop_;
    IoFd destination_;
    std::optional<Readiness> writable_;  // made when the destination first fills
    std::string queue_;
    std::size_t queue_start_ = 0;  // bytes of queue_ already written
    bool waiting_ = false;
    bool dropped_ = false;
    std::vector<std::function<void()>> waiting_for_room_;
};

// The sinks of one job and which of them each task's streams feed.
class Sinks {
public:
    // Opens the shell's stdout and stderr (one sink when both lead to the
    // same file) and the --output/--error files of `job`, created 0666 less
    // the umask and truncated. Errors name the option and the file:
    // `--output: cannot open "x": Permission denied`.
    static Result<std::unique_ptr<Sinks>> open(asio::io_context& loop, const Job& job);

    Sink& out_of(std::size_t task) { return *out_[task]; }
    Sink& err_of(std::size_t task) { return *err_[task]; }
    // The shell's own stderr, for its messages.
    Sink& messages() { return *stderr_; }

    void flush();

private:
    explicit Sinks(asio::io_context& loop) : loop_(loop) {}
    Sink* terminal(int fd);
    Result<Sink*> file(const std::string& option, const std::string& name);

    asio::io_context& loop_;
    std::vector<std::unique_ptr<Sink>> owned_;
    std::map<std::string, Sink*> files_;  // by name: a name given twice is one sink
    Sink* stdout_ = nullptr;
    Sink* stderr_ = nullptr;
    std::vector<Sink*> out_;  // by task index in the job
    std::vector<Sink*> err_;
};

}  // namespace gantry::shell
