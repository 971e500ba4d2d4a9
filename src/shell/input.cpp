#include "shell/input.h"

#include <fcntl.h>
#include <unistd.h>

#include <asio/post.hpp>

#include <cerrno>
#include <cstring>

namespace gantry::shell {
namespace {

// Chunks read in one turn of the loop before others get theirs.
constexpr int kChunksPerTurn = 16;

}  // namespace

Result<std::unique_ptr<InputFeeder>> InputFeeder::open(asio::io_context& loop, const Input& input) {
    IoFd source;
    if (input.source == Input::Source::kFile) {
        Fd file(::open(input.file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
        if (!file)
            return Error("--input",
                         "cannot open " + quote(input.file) + ": " + std::strerror(errno));
        source = opened_file(std::move(file));
    } else if (input.source == Input::Source::kStdin) {
        source = readable_stdio(0);
    }
    return std::unique_ptr<InputFeeder>(new InputFeeder(loop, std::move(source)));
}

InputFeeder::~InputFeeder() {
    // The descriptors belong to each pipe's shell_end.
    for (const auto& pipe : pipes_)
        if (pipe->writable)
            pipe->writable->release();
}

Result<InputFeeder::Receiver> InputFeeder::add_receiver() {
    auto pipe = make_pipe();
    if (!pipe)
        return pipe.error();
    if (auto status = set_nonblocking(pipe->write.get()); !status)
        return status.error();
    auto task_end = at_least(std::move(pipe->read), 4);
    if (!task_end)
        return task_end.error();
    pipes_.push_back(std::make_unique<Pipe>());
    pipes_.back()->shell_end = std::move(pipe->write);
    return Receiver{pipes_.size() - 1, std::move(*task_end)};
}

void InputFeeder::drop(std::size_t id) {
    Pipe& pipe = *pipes_[id];
    if (!pipe.shell_end)
        return;
    const bool was_taking = !ended_ && chunk_size_ > 0 && pipe.taken < chunk_size_;
    close(pipe);
    if (was_taking)
        done_with_chunk();
}

void InputFeeder::start() {
    if (pipes_.empty())
        return;
    chunk_.resize(kChunk);
    read_chunks();
}

void InputFeeder::read_chunks() {
    for (int turn = 0; turn < kChunksPerTurn; ++turn) {
        const ssize_t n = read_some(source_, chunk_.data(), chunk_.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            wait_readable();
            return;
        }
        if (n <= 0) {
            end_of_input();
            return;
        }
        chunk_size_ = static_cast<std::size_t>(n);
        waiting_ = 0;
        for (const auto& pipe : pipes_) {
            if (!pipe->shell_end)
                continue;
            pipe->taken = 0;
            if (!offer(*pipe))
                ++waiting_;
        }
        if (waiting_ > 0)
            return;  // the last receiver to take the chunk reads the next
    }
    asio::post(loop_, [this] { read_chunks(); });
}

void InputFeeder::wait_readable() {
    if (!readable_) {
        auto readiness = Readiness::watch(loop_, source_.fd, Readiness::Direction::kRead);
        if (!readiness) {
            end_of_input();
            return;
        }
        readable_.emplace(std::move(*readiness));
    }
    readable_->async_wait([this](const asio::error_code& error) {
        if (!error && !ended_)
            read_chunks();
    });
}

bool InputFeeder::offer(Pipe& pipe) {
    while (pipe.taken < chunk_size_) {
        const ssize_t n =
            ::write(pipe.shell_end.get(), chunk_.data() + pipe.taken, chunk_size_ - pipe.taken);
        if (n >= 0) {
            pipe.taken += static_cast<std::size_t>(n);
        } else if (errno == EAGAIN) {
            wait_writable(pipe);
            return false;
        } else if (errno != EINTR) {
            close(pipe);  // EPIPE: the task no longer reads its stdin
            return true;
        }
    }
    return true;
}

void InputFeeder::wait_writable(Pipe& pipe) {
    if (!pipe.writable) {
        pipe.writable.emplace(loop_);
        asio::error_code error;
        pipe.writable->assign(pipe.shell_end.get(), error);
        if (error) {
            pipe.writable.reset();
            close(pipe);
            asio::post(loop_, [this] { done_with_chunk(); });
            return;
        }
    }
    pipe.waiting = true;
    pipe.writable->async_wait(asio::posix::descriptor_base::wait_write,
                              [this, &pipe](const asio::error_code& error) {
                                  pipe.waiting = false;
                                  if (error || !pipe.shell_end)
                                      return;
                                  if (offer(pipe))
                                      done_with_chunk();
                              });
}

void InputFeeder::done_with_chunk() {
    if (waiting_ > 0 && --waiting_ == 0 && !ended_)
        read_chunks();
}

void InputFeeder::close(Pipe& pipe) {
    if (pipe.writable) {
        pipe.writable->release();  // cancels a wait: its handler sees the pipe closed
        pipe.writable.reset();
    }
    pipe.shell_end.reset();
}

void InputFeeder::end_of_input() {
    ended_ = true;
    for (const auto& pipe : pipes_)
        close(*pipe);
    readable_.reset();  // cancels a wait: its handler sees the input ended
    source_ = IoFd{};
}

}  // namespace gantry::shell
