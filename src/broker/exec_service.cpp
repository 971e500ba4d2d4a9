#include "broker/exec_service.h"

#include <sys/wait.h>

#include <optional>
#include <vector>

#include <asio/post.hpp>

#include "broker/exec.h"
#include "shell/exit_status.h"

namespace gantry::broker {

namespace {

// One shell of an execution, on one broker rank.
struct RankShell {
    std::uint32_t rank = 0;
    std::unique_ptr<ShellProcess> process;
    bool started = false;
    bool ended = false;
};

class LocalExecution : public Execution {
public:
    LocalExecution(asio::io_context& loop, JobId job, ExecEvents events)
        : loop_(loop), job_(job), events_(std::move(events)) {}

    Status start_shell(const std::string& program, std::uint32_t rank, const Json& header) {
        shells_.push_back(RankShell{rank, nullptr});
        const std::size_t index = shells_.size() - 1;
        ShellProcess::Handlers handlers{
            [this, index](shell::records::Record&& record) { on_record(index, std::move(record)); },
            [this](const Error& error) { events_.exception("exec", error); },
            [this, index](int wait_status) { on_shell_end(index, wait_status); },
        };
        auto process = ShellProcess::start(loop_, program, header, std::move(handlers));
        if (!process) {
            shells_.pop_back();
            return process.error();
        }
        shells_.back().process = std::move(*process);
        return {};
    }

    void signal(int number) override {
        for (RankShell& shell : shells_)
            if (!shell.ended)
                shell.process->signal(number);
    }
    void terminate() override {
        for (RankShell& shell : shells_)
            if (!shell.ended)
                shell.process->terminate();
    }
    // Rank 0 of the job, and whoever --input names, are on the first shell.
    Status write_stdin(std::string_view bytes) override {
        return shells_.front().process->write_stdin(bytes);
    }
    void close_stdin() override { shells_.front().process->close_stdin(); }

private:
    void on_record(std::size_t index, shell::records::Record&& record) {
        RankShell& shell = shells_[index];
        using Kind = shell::records::Record::Kind;
        switch (record.kind) {
            case Kind::kStdout:
            case Kind::kStderr:
            case Kind::kMessage: {
                const auto kind = record.kind == Kind::kStdout   ? ShellOutput::Kind::kStdout
                                  : record.kind == Kind::kStderr ? ShellOutput::Kind::kStderr
                                                                 : ShellOutput::Kind::kMessage;
                events_.output(
                    ShellOutput{job_, shell.rank, kind, record.rank, std::move(record.bytes)});
                break;
            }
            case Kind::kStarted:
                shell.started = true;
                if (!started_ && all_shells([](const RankShell& s) { return s.started; })) {
                    started_ = true;
                    events_.started();
                }
                break;
            case Kind::kExit:
                events_.task_end(TaskEnd{job_, shell.rank, record.rank, record.wait_status});
                break;
        }
    }

    void on_shell_end(std::size_t index, int wait_status) {
        RankShell& shell = shells_[index];
        shell.ended = true;
        if (!status_ || shell::exit_code_of(*status_) == 0)
            status_ = wait_status;
        events_.released(shell.rank);
        if (!all_shells([](const RankShell& s) { return s.ended; }))
            return;
        // Posted: the job manager lets go of this execution when it hears
        // of its end, which must not happen inside a shell's own callback.
        asio::post(loop_, [finished = events_.finished, status = *status_,
                           alive = std::weak_ptr<bool>(alive_)] {
            if (alive.lock())
                finished(status);
        });
    }

    template <class Test>
    bool all_shells(Test test) const {
        for (const RankShell& shell : shells_)
            if (!test(shell))
                return false;
        return true;
    }

    asio::io_context& loop_;
    JobId job_;
    ExecEvents events_;
    std::vector<RankShell> shells_;
    bool started_ = false;
    std::optional<int> status_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class LocalExecService : public ExecService {
public:
    LocalExecService(asio::io_context& loop, std::string program, std::uint32_t own_rank,
                     RankTopologies topologies)
        : loop_(loop),
          program_(std::move(program)),
          own_rank_(own_rank),
          topologies_(std::move(topologies)) {}

    Result<std::unique_ptr<Execution>> start(const ExecRequest& request,
                                             ExecEvents events) override {
        if (auto served = check_ranks_have_brokers(request.R); !served)
            return Error("job " + std::to_string(request.job), served.error().message());
        return start_node_shell(loop_, program_, own_rank_, request,
                                topologies_.only(request.R.ranks()).to_json(), std::move(events));
    }

private:
    asio::io_context& loop_;
    std::string program_;
    std::uint32_t own_rank_;
    RankTopologies topologies_;
};

}  // namespace

Result<std::unique_ptr<Execution>> start_node_shell(asio::io_context& loop,
                                                    const std::string& shell_program,
                                                    std::uint32_t rank, const ExecRequest& request,
                                                    const Json& topologies, ExecEvents events) {
    auto execution = std::make_unique<LocalExecution>(loop, request.job, std::move(events));
    // The shell maps the whole job on the same topologies, and runs the
    // node of its broker's rank.
    const Json header = {{"id", std::to_string(request.job)},
                         {"jobspec", request.jobspec},
                         {"R", request.R.to_json()},
                         {"rank", rank},
                         {"topologies", topologies}};
    if (auto started = execution->start_shell(shell_program, rank, header); !started)
        return started.error();
    return std::unique_ptr<Execution>(std::move(execution));
}

std::unique_ptr<ExecService> make_local_exec_service(asio::io_context& loop,
                                                     std::string shell_program,
                                                     std::uint32_t own_rank,
                                                     RankTopologies topologies) {
    return std::make_unique<LocalExecService>(loop, std::move(shell_program), own_rank,
                                              std::move(topologies));
}

Status check_ranks_have_brokers(const ResourceSet& R, const IdSet& up, std::uint32_t size) {
    const IdSet unserved = R.ranks() - up;
    if (unserved.empty())
        return {};
    const std::string ranks =
        "R names rank" + std::string(unserved.count() > 1 ? "s " : " ") + unserved.encode();
    if (size <= 1)
        return Error("", ranks + ", where no broker runs (this instance has one broker, rank 0)");
    return Error("", ranks + ", where no broker is up (this instance has " + std::to_string(size) +
                         " brokers; up: " + (up.empty() ? std::string("none") : up.encode()) + ")");
}

}  // namespace gantry::broker
