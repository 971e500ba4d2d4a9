#include "broker/exec_service.h"

#include <sys/wait.h>

#include <optional>

#include <asio/post.hpp>

#include "broker/exec.h"
#include "shell/header.h"

namespace gantry::broker {

namespace {

// The shell of one broker rank, a child of this broker: the whole
// execution of a job on one node, or rank 0's part of one across nodes
// (remote_exec.h gathers the parts).
class LocalExecution : public Execution {
public:
    LocalExecution(asio::io_context& loop, JobId job, std::uint32_t rank, ExecEvents events)
        : loop_(loop), job_(job), rank_(rank), events_(std::move(events)) {}
    ~LocalExecution() override { refuse_modex(); }

    Status start_shell(const std::string& program, const Json& header) {
        ShellProcess::Handlers handlers{
            [this](shell::records::Record&& record) { on_record(std::move(record)); },
            [this](const Error& error) { events_.exception("exec", error); },
            [this](int wait_status) { on_shell_end(wait_status); },
            events_.hold_output,
        };
        auto process = ShellProcess::start(loop_, program, header, std::move(handlers));
        if (!process)
            return process.error();
        process_ = std::move(*process);
        return {};
    }

    void signal(int number) override {
        if (!ended_)
            process_->signal(number);
    }
    void terminate() override {
        if (!ended_)
            process_->terminate();
    }
    void complete_fence(const std::string& merged_puts) override {
        if (!ended_)
            process_->complete_fence(merged_puts);
    }
    Status write_stdin(std::string_view bytes) override { return process_->write_stdin(bytes); }
    void close_stdin() override { process_->close_stdin(); }
    void when_stdin_room(std::function<void()> room) override {
        process_->when_stdin_room(std::move(room));
    }

    void serve_modex(std::uint32_t task, const std::string& key, ModexAnswer answer) override {
        if (ended_) {
            answer(std::nullopt);
            return;
        }
        if (modex_served_.add(task, key, std::move(answer)))
            process_->request_modex(task, key);
    }
    void answer_modex(std::uint32_t task, std::optional<std::string> data) override {
        if (!ended_)
            process_->answer_modex(task, std::move(data));
    }

private:
    void on_record(shell::records::Record&& record) {
        using Kind = shell::records::Record::Kind;
        switch (record.kind) {
            case Kind::kStdout:
            case Kind::kStderr:
            case Kind::kMessage: {
                const auto kind = record.kind == Kind::kStdout   ? ShellOutput::Kind::kStdout
                                  : record.kind == Kind::kStderr ? ShellOutput::Kind::kStderr
                                                                 : ShellOutput::Kind::kMessage;
                events_.output(
                    ShellOutput{job_, rank_, kind, record.rank, std::move(record.bytes)});
                break;
            }
            case Kind::kStarted:
                events_.started();
                break;
            case Kind::kExit:
                events_.task_end(TaskEnd{job_, rank_, record.rank, record.wait_status});
                break;
            case Kind::kFence:
                if (events_.fence)
                    events_.fence(rank_, std::move(record.bytes));
                else
                    process_->complete_fence(std::move(record.bytes));
                break;
            case Kind::kModexRequest:
                if (events_.modex)
                    events_.modex(rank_, record.rank, record.node, record.bytes);
                else
                    process_->answer_modex(record.rank, std::nullopt);
                break;
            case Kind::kModex:
                served_modex(record.rank, std::move(record.bytes));
                break;
            case Kind::kNoModex:
                served_modex(record.rank, std::nullopt);
                break;
        }
    }

    // Whoever waits for its tasks' data hears that none will come.
    void refuse_modex() { modex_served_.refuse_all(); }

    void served_modex(std::uint32_t task, const std::optional<std::string>& data) {
        if (const auto next = modex_served_.answer(task, data); next && !ended_)
            process_->request_modex(task, *next);
    }

    void on_shell_end(int wait_status) {
        ended_ = true;
        refuse_modex();
        events_.released(rank_);
        // Posted: the job manager lets go of this execution when it hears
        // of its end, which must not happen inside the shell's own callback.
        asio::post(loop_,
                   [finished = events_.finished, wait_status, alive = std::weak_ptr<bool>(alive_)] {
                       if (alive.lock())
                           finished(wait_status);
                   });
    }

    asio::io_context& loop_;
    JobId job_;
    std::uint32_t rank_;
    ExecEvents events_;
    std::unique_ptr<ShellProcess> process_;
    shell::records::ModexRequests modex_served_;  // other nodes' requests
    bool ended_ = false;
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
    auto execution = std::make_unique<LocalExecution>(loop, request.job, rank, std::move(events));
    // The shell maps the whole job on the same topologies, and runs the
    // node of its broker's rank.
    const Json header = shell::shell_header(std::to_string(request.job), request.jobspec, request.R,
                                            rank, topologies, request.map_inputs);
    if (auto started = execution->start_shell(shell_program, header); !started)
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
