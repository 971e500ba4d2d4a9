// Where the tasks' output goes: the shell's stdout and stderr, and the files
// of --output and --error; or, under an instance, records on the
// supervisor's socket. Writing never blocks the shell's loop, and the
// bytes waiting for a slow reader are bounded: the readers of the tasks'
// pipes stop while a sink is full, so the tasks block in write instead.
#pragma once

#include <asio/io_context.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
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
#include "shell/records.h"
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

    // `failed` runs (posted on the loop) when the destination fails and the
    // sink starts dropping: for the supervisor's socket, the broker is gone.
    void on_failure(std::function<void()> failed) { on_failure_ = std::move(failed); }
    // The errno of the write that failed (EPIPE: the reader is gone); 0
    // while the destination takes what it is given.
    int failure() const { return failure_; }

private:
    void write_queue();
    void compact();  // drops the bytes already written from the queue
    void wait_writable();
    void give_room();
    void drop(int error);

    asio::io_context& loop_;
    IoFd destination_;
    std::optional<Readiness> writable_;  // made when the destination first fills
    std::string queue_;
    std::size_t queue_start_ = 0;  // bytes of queue_ already written
    bool waiting_ = false;
    bool dropped_ = false;
    int failure_ = 0;
    std::vector<std::function<void()>> waiting_for_room_;
    std::function<void()> on_failure_;
};

// Bytes framed as records of one kind on their way to the supervisor's
// socket: each write becomes one out, err or msg record (several when it
// is longer than records::kMaxLength), written to the sink as one piece.
class RecordWriter : public ByteWriter {
public:
    // `scratch` is lent for building records (one for every writer).
    RecordWriter(Sink& socket, records::Record::Kind kind, std::uint32_t rank, std::string& scratch)
        : socket_(socket), kind_(kind), rank_(rank), scratch_(scratch) {}

    void write(std::string_view bytes) override;

private:
    Sink& socket_;
    records::Record::Kind kind_;
    std::uint32_t rank_;
    std::string& scratch_;
};

// Where one stream's assembled bytes go: `writer` takes them (the sink
// itself, or a RecordWriter in front of it) and `sink` is the queue whose
// fullness stops the stream's reader.
struct Destination {
    ByteWriter* writer = nullptr;
    Sink* sink = nullptr;
    bool framed = false;  // records for the supervisor: raw bytes, never labelled
};

// The sinks of one job and which of them each task's streams feed.
class Sinks {
public:
    // Opens the shell's stdout and stderr (one sink when both lead to the
    // same file), or for a supervised job the supervisor's socket instead,
    // and the --output/--error files of `job`, created 0666 less the umask
    // and truncated, with the --output-filename directories (0755 less the
    // umask) and files. With --merge-stderr-to-stdout a task's stderr has the
    // destinations of its stdout, and no file of its own. Errors name the
    // option and the file: `--output: cannot open "x": Permission denied`,
    // `--output-filename: cannot create "d/1": Permission denied`.
    static Result<std::unique_ptr<Sinks>> open(asio::io_context& loop, const Job& job);

    Destination out_of(std::size_t task) const { return out_[task]; }
    Destination err_of(std::size_t task) const { return err_[task]; }
    // Where a stream's copy goes when it also goes to an --output-filename
    // file: where it would go without that option. None (a null writer):
    // no copy.
    Destination out_copy_of(std::size_t task) const { return out_copy_[task]; }
    Destination err_copy_of(std::size_t task) const { return err_copy_[task]; }
    // The shell's own stderr, or msg records to the supervisor.
    ByteWriter& messages() { return *messages_; }
    // The supervisor's socket; null when the job is not supervised.
    Sink* supervisor() { return supervisor_; }
    // The shell's stdout and stderr (the same sink when they lead to the
    // same file); null when the job is supervised.
    Sink* standard_output() { return stdout_; }
    Sink* standard_error() { return stderr_; }

    void flush();

private:
    explicit Sinks(asio::io_context& loop) : loop_(loop) {}
    void open_terminals();
    void open_supervisor(int fd);
    // Where a stream goes without an --output/--error file: the shell's
    // stdout or stderr, or records for the supervisor.
    Destination default_destination(records::Record::Kind kind, std::uint32_t rank);
    Sink* terminal(int fd);
    Result<Sink*> file(const std::string& option, const std::string& name);
    // The --output-filename directory of `task`, made with its parents.
    Result<std::string> rank_dir(const Output& output, const Task& task);

    asio::io_context& loop_;
    std::vector<std::unique_ptr<Sink>> owned_;
    std::map<std::string, Sink*> files_;  // by name: a name given twice is one sink
    Sink* stdout_ = nullptr;              // unsupervised
    Sink* stderr_ = nullptr;
    Sink* supervisor_ = nullptr;        // supervised
    std::deque<RecordWriter> framing_;  // never moves: streams point at them
    std::string record_scratch_;
    ByteWriter* messages_ = nullptr;
    std::vector<Destination> out_;  // by task index in the job
    std::vector<Destination> err_;
    std::vector<Destination> out_copy_;
    std::vector<Destination> err_copy_;
};

}  // namespace gantry::shell
