#include "shell/sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/post.hpp>

#include <cerrno>
#include <cstring>

namespace gantry::shell {
namespace {

// Room for a full queue and the reads that overshoot it, reserved once so
// that the queue never doubles its buffer on the way (pages are only
// resident once written).
constexpr std::size_t kQueueCapacity = Sink::kQueueBound + Sink::kQueueBound / 4;

// The process umask set to the job's while the shell creates its files.
class UmaskScope {
public:
    explicit UmaskScope(std::optional<mode_t> mask) {
        if (mask)
            previous_ = ::umask(*mask);
    }
    UmaskScope(const UmaskScope&) = delete;
    UmaskScope& operator=(const UmaskScope&) = delete;
    ~UmaskScope() {
        if (previous_)
            ::umask(*previous_);
    }

private:
    std::optional<mode_t> previous_;
};

}  // namespace

Sink::Sink(asio::io_context& loop, IoFd destination)
    : loop_(loop), destination_(std::move(destination)) {}

void Sink::write(std::string_view bytes) {
    if (dropped_ || bytes.empty() || destination_.mode == IoMode::kClosed)
        return;
    if (queued() == 0) {
        while (!bytes.empty()) {
            const ssize_t n = write_some(destination_, bytes.data(), bytes.size());
            if (n >= 0) {
                bytes.remove_prefix(static_cast<std::size_t>(n));
            } else if (errno == EAGAIN && destination_.mode != IoMode::kBlocking &&
                       destination_.mode != IoMode::kFile) {
                break;  // the rest waits in the queue
            } else if (errno == EAGAIN) {
                shell::wait_writable(destination_);  // someone set O_NONBLOCK on it
            } else if (errno != EINTR) {
                drop(errno);
                return;
            }
        }
        if (bytes.empty())
            return;
    }
    if (queue_.capacity() < kQueueCapacity)
        queue_.reserve(kQueueCapacity);
    if (queue_.size() + bytes.size() > queue_.capacity())
        compact();  // rather than a buffer twice as large
    queue_.append(bytes);
    wait_writable();
}

void Sink::when_room(std::function<void()> resume) {
    if (!full() || dropped_)
        asio::post(loop_, std::move(resume));
    else
        waiting_for_room_.push_back(std::move(resume));
}

void Sink::write_queue() {
    while (queued() > 0) {
        const ssize_t n = write_some(destination_, queue_.data() + queue_start_, queued());
        if (n >= 0) {
            queue_start_ += static_cast<std::size_t>(n);
        } else if (errno == EAGAIN) {
            break;
        } else if (errno != EINTR) {
            drop(errno);
            return;
        }
    }
    if (queued() == 0) {
        queue_.clear();
        queue_start_ = 0;
    } else {
        if (queue_start_ > queue_.size() / 2)
            compact();
        wait_writable();
    }
    give_room();
}

void Sink::compact() {
    queue_.erase(0, queue_start_);
    queue_start_ = 0;
}

void Sink::wait_writable() {
    if (waiting_)
        return;
    if (!writable_) {
        auto readiness = Readiness::watch(loop_, destination_.fd, Readiness::Direction::kWrite);
        if (!readiness) {
            // Not pollable after all: write what is queued the plain way.
            destination_.mode = IoMode::kBlocking;
            flush();
            return;
        }
        writable_.emplace(std::move(*readiness));
    }
    waiting_ = true;
    writable_->async_wait([this](const asio::error_code& error) {
        waiting_ = false;
        if (!error)
            write_queue();
    });
}

void Sink::give_room() {
    if (waiting_for_room_.empty() || queued() > kQueueBound / 2)
        return;
    auto resumes = std::move(waiting_for_room_);
    waiting_for_room_.clear();
    for (auto& resume : resumes)
        asio::post(loop_, std::move(resume));
}

void Sink::drop(int error) {
    dropped_ = true;
    failure_ = error;
    queue_.clear();
    queue_start_ = 0;
    give_room();
    if (on_failure_) {
        asio::post(loop_, std::move(on_failure_));
        on_failure_ = nullptr;
    }
}

void Sink::flush() {
    while (queued() > 0 && !dropped_) {
        const ssize_t n = write_some(destination_, queue_.data() + queue_start_, queued());
        if (n >= 0)
            queue_start_ += static_cast<std::size_t>(n);
        else if (errno == EAGAIN)
            shell::wait_writable(destination_);
        else if (errno != EINTR)
            drop(errno);
    }
    queue_.clear();
    queue_start_ = 0;
    give_room();
}

void RecordWriter::write(std::string_view bytes) {
    while (!bytes.empty()) {
        const std::string_view piece = bytes.substr(0, records::kMaxLength);
        // Header and bytes in one write: one send while the socket has room.
        scratch_.clear();
        records::append_header(scratch_, kind_, rank_, piece.size());
        scratch_.append(piece);
        socket_.write(scratch_);
        bytes.remove_prefix(piece.size());
    }
}

Result<std::unique_ptr<Sinks>> Sinks::open(asio::io_context& loop, const Job& job) {
    std::unique_ptr<Sinks> sinks(new Sinks(loop));
    if (job.supervisor_fd)
        sinks->open_supervisor(*job.supervisor_fd);
    else
        sinks->open_terminals();

    const Output& output = job.output;
    const UmaskScope umask(job.umask);
    const std::size_t tasks = job.tasks.size();
    for (auto* list : {&sinks->out_, &sinks->err_, &sinks->out_copy_, &sinks->err_copy_})
        list->reserve(tasks);
    for (const Task& task : job.tasks) {
        const TemplateValues values{job.id, task.rank, job.hostname};
        Destination out = sinks->default_destination(records::Record::Kind::kStdout, task.rank);
        if (!output.output_template.empty()) {
            auto file = sinks->file("--output", expand_template(output.output_template, values));
            if (!file)
                return file.error();
            out = Destination{*file, *file, false};
        }
        Destination err =
            output.output_template.empty()
                ? sinks->default_destination(records::Record::Kind::kStderr, task.rank)
                : out;
        if (!output.error_template.empty() && !output.merge_stderr) {
            auto file = sinks->file("--error", expand_template(output.error_template, values));
            if (!file)
                return file.error();
            err = Destination{*file, *file, false};
        }
        if (output.merge_stderr)
            err = out;
        Destination out_copy;
        Destination err_copy;
        if (!output.rank_dir.empty()) {
            auto dir = sinks->rank_dir(output, task);
            if (!dir)
                return dir.error();
            if (output.copy_rank_output) {
                out_copy = out;
                err_copy = err;
            }
            auto out_file = sinks->file("--output-filename", *dir + "/stdout");
            if (!out_file)
                return out_file.error();
            out = Destination{*out_file, *out_file, false};
            err = out;
            if (!output.merge_stderr) {
                auto err_file = sinks->file("--output-filename", *dir + "/stderr");
                if (!err_file)
                    return err_file.error();
                err = Destination{*err_file, *err_file, false};
            }
        }
        sinks->out_.push_back(out);
        sinks->err_.push_back(err);
        sinks->out_copy_.push_back(out_copy);
        sinks->err_copy_.push_back(err_copy);
    }
    return sinks;
}

Result<std::string> Sinks::rank_dir(const Output& output, const Task& task) {
    std::string rank = std::to_string(task.rank);
    if (rank.size() < output.rank_digits)
        rank.insert(0, output.rank_digits - rank.size(), '0');
    const std::string dir = output.rank_dir + "/rank." + rank;
    // Each missing directory from the top down, so that the one named in a
    // failure is the one that could not be made.
    for (std::size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
        const std::string part = dir.substr(0, end);
        struct stat st;
        if (::mkdir(part.c_str(), 0755) != 0 &&
            (errno != EEXIST || ::stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
            return Error("--output-filename",
                         "cannot create " + quote(part) + ": " + std::strerror(errno));
        if (end == std::string::npos)
            break;
    }
    return dir;
}

void Sinks::open_terminals() {
    stdout_ = terminal(1);
    stderr_ = same_file(1, 2) ? stdout_ : terminal(2);
    messages_ = stderr_;
}

// The shell's stdout and stderr are not touched: everything the shell would
// write there goes to the supervisor as records.
void Sinks::open_supervisor(int fd) {
    owned_.push_back(std::make_unique<Sink>(loop_, IoFd{Fd(), fd, IoMode::kSocket}));
    supervisor_ = owned_.back().get();
    messages_ =
        &framing_.emplace_back(*supervisor_, records::Record::Kind::kMessage, 0, record_scratch_);
}

Destination Sinks::default_destination(records::Record::Kind kind, std::uint32_t rank) {
    if (!supervisor_) {
        Sink* terminal = kind == records::Record::Kind::kStdout ? stdout_ : stderr_;
        return Destination{terminal, terminal, false};
    }
    RecordWriter& framing = framing_.emplace_back(*supervisor_, kind, rank, record_scratch_);
    return Destination{&framing, supervisor_, true};
}

Sink* Sinks::terminal(int fd) {
    owned_.push_back(std::make_unique<Sink>(loop_, writable_stdio(fd)));
    return owned_.back().get();
}

Result<Sink*> Sinks::file(const std::string& option, const std::string& name) {
    if (const auto known = files_.find(name); known != files_.end())
        return known->second;
    Fd file(::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666));
    if (!file)
        return Error(option, "cannot open " + quote(name) + ": " + std::strerror(errno));
    owned_.push_back(std::make_unique<Sink>(loop_, opened_file(std::move(file))));
    files_.emplace(name, owned_.back().get());
    return owned_.back().get();
}

void Sinks::flush() {
    for (const auto& sink : owned_)
        sink->flush();
}

}  // namespace gantry::shell
