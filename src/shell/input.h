// The job's stdin, fed to the tasks that receive it: each receiver gets the
// same bytes through a pipe of its own.
#pragma once

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "shell/fd.h"
#include "shell/io_fd.h"
#include "shell/readiness.h"
#include "shell/shell.h"
#include "util/error.h"

namespace gantry::shell {

// Reads the input a chunk at a time and offers each chunk to every live
// receiver; the next chunk is read only when all of them have taken it, so
// the slowest receiver sets the pace and memory stays at one chunk. A
// receiver whose reader is gone (EPIPE, or its task has exited) is dropped.
// At end of input every receiver's pipe is closed: the tasks see end of file.
class InputFeeder {
public:
    // Opens the shell's fd 0 (Input::Source::kStdin) or Input::file. Errors:
    // `--input: cannot open "x": No such file or directory`.
    static Result<std::unique_ptr<InputFeeder>> open(asio::io_context& loop, const Input& input);

    InputFeeder(const InputFeeder&) = delete;
    InputFeeder& operator=(const InputFeeder&) = delete;
    ~InputFeeder();

    struct Receiver {
        std::size_t id = 0;  // for drop()
        Fd task_end;         // becomes the task's stdin
    };
    Result<Receiver> add_receiver();
    // The receiver's task has exited: close its pipe.
    void drop(std::size_t id);

    // Starts reading, once every receiver is added.
    void start();

private:
    static constexpr std::size_t kChunk = 64 * 1024;

    struct Pipe {
        Fd shell_end;                                            // non-blocking
        std::optional<asio::posix::stream_descriptor> writable;  // made on first need
        std::size_t taken = 0;  // bytes of the current chunk written
        bool waiting = false;   // for room in the pipe
    };

    InputFeeder(asio::io_context& loop, IoFd source) : loop_(loop), source_(std::move(source)) {}
    void read_chunks();
    void wait_readable();
    // Writes what `pipe` takes of the current chunk; true once it has all.
    bool offer(Pipe& pipe);
    void wait_writable(Pipe& pipe);
    // `pipe` is done with the current chunk: read the next once all are.
    void done_with_chunk();
    void close(Pipe& pipe);
    void end_of_input();

    asio::io_context& loop_;
    IoFd source_;
    std::optional<Readiness> readable_;  // made when the source first runs dry
    std::vector<std::unique_ptr<Pipe>> pipes_;
    std::vector<char> chunk_;
    std::size_t chunk_size_ = 0;
    std::size_t waiting_ = 0;  // receivers still taking the current chunk
    bool ended_ = false;
};

}  // namespace gantry::shell
