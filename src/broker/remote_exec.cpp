#include "broker/remote_exec.h"

#include <signal.h>
#include <sys/wait.h>

#include <optional>
#include <utility>
#include <vector>

#include <asio/post.hpp>

#include "broker/fence_tree.h"
#include "shell/exit_status.h"
#include "shell/records.h"
#include "util/base64.h"

namespace gantry::broker {

namespace {

// The wait status of a part whose rank was lost: as if SIGKILL ended it.
constexpr int kLostStatus = SIGKILL;

std::string_view stream_name(ShellOutput::Kind kind) {
    switch (kind) {
        case ShellOutput::Kind::kStdout:
            return "stdout";
        case ShellOutput::Kind::kStderr:
            return "stderr";
        case ShellOutput::Kind::kMessage:
            break;
    }
    return "message";
}

std::optional<ShellOutput::Kind> stream_kind(std::string_view name) {
    if (name == "stdout")
        return ShellOutput::Kind::kStdout;
    if (name == "stderr")
        return ShellOutput::Kind::kStderr;
    if (name == "message")
        return ShellOutput::Kind::kMessage;
    return std::nullopt;
}

// A job id in a request's params, or the error that answers it.
Result<std::uint64_t> job_of(const overlay::Message& request) {
    const auto found = request.params.find("job");
    if (found == request.params.end() || !found->is_number_unsigned())
        return Error(request.method, "\"job\" must be a job id");
    return found->get<std::uint64_t>();
}

// The replies of one exec.start at a rank other than 0. The ends of tasks
// that end together (a shell reports them in one read) go up the tree as
// one message, sent once the broker is done with what it read, or before
// any other reply, so that each task's output comes before its end.
class EventReplies : public std::enable_shared_from_this<EventReplies> {
public:
    EventReplies(asio::io_context& loop, Responder responder)
        : loop_(loop), responder_(std::move(responder)) {}

    void task_end(const TaskEnd& end) {
        const bool first = ends_.empty();
        ends_.push_back(Json::array({end.task_rank, end.wait_status}));
        if (first)
            asio::post(loop_, [self = weak_from_this()] {
                if (const auto replies = self.lock())
                    replies->send_ends();
            });
    }
    void more(const Json& event) {
        send_ends();
        responder_.more(event);
    }
    void result(const Json& event) {
        send_ends();
        responder_.result(event);
    }

private:
    void send_ends() {
        if (ends_.empty())
            return;
        responder_.more({{"event", "task-ends"}, {"ends", std::move(ends_)}});
        ends_ = Json::array();
    }

    asio::io_context& loop_;
    Responder responder_;
    Json ends_ = Json::array();
};

// --- At rank 0 ---------------------------------------------------------------

// The parts of one execution, one per rank of R.
class InstanceExecution : public Execution, public std::enable_shared_from_this<InstanceExecution> {
public:
    InstanceExecution(asio::io_context& loop, Peers& peers, FenceTree& fences, DirectModex& modex,
                      JobId job, IdSet ranks, bool kill_on_bad_exit, ExecEvents events)
        : loop_(loop),
          peers_(peers),
          fences_(fences),
          modex_(modex),
          job_(job),
          ranks_(std::move(ranks)),
          events_(std::move(events)),
          kill_on_bad_exit_(kill_on_bad_exit) {}

    ~InstanceExecution() override {
        fences_.forget(job_);
        // The instance is going away: what still runs elsewhere is killed.
        for (Part& part : parts_)
            if (!part.ended && !part.local)
                send(part, "exec.signal", {{"job", job_}, {"signal", SIGKILL}});
    }

    struct Part {
        std::uint32_t rank = 0;
        std::unique_ptr<Execution> local;  // rank 0's own shell
        bool started = false;
        bool ended = false;
    };

    Status start_local(asio::io_context& loop, const std::string& program,
                       const ExecRequest& request, const Json& topologies) {
        parts_.push_back(Part{0, nullptr});
        auto local = start_node_shell(loop, program, 0, request, topologies, local_events(0));
        if (!local) {
            parts_.pop_back();
            return local.error();
        }
        parts_.back().local = std::move(*local);
        return {};
    }

    void start_remote(std::uint32_t rank, const ExecRequest& request, const Json& topologies) {
        parts_.push_back(Part{rank, nullptr});
        const Json params = {{"job", request.job},
                             {"R", request.R.to_json()},
                             {"jobspec", request.jobspec},
                             {"topologies", topologies},
                             {"map_inputs", request.map_inputs}};
        std::weak_ptr<InstanceExecution> self = weak_from_this();
        peers_.call(rank, "exec.start", params, [self, rank](const overlay::Reply& reply) {
            if (const auto execution = self.lock())
                execution->on_reply(rank, reply);
        });
    }

    void signal(int number) override {
        for (Part& part : parts_) {
            if (part.ended)
                continue;
            if (part.local)
                part.local->signal(number);
            else
                send(part, "exec.signal", {{"job", job_}, {"signal", number}});
        }
    }

    void terminate() override {
        for (Part& part : parts_) {
            if (part.ended)
                continue;
            if (part.local)
                part.local->terminate();
            else
                send(part, "exec.terminate", {{"job", job_}});
        }
    }

    // The merged puts go to rank 0's own part, and down the tree to the
    // others.
    void complete_fence(const std::string& merged_puts) override {
        for (Part& part : parts_)
            if (!part.ended && part.local)
                part.local->complete_fence(merged_puts);
        fences_.broadcast(job_, ranks_, merged_puts);
    }

    // Every node's puts of a barrier have come up the tree: merged, they
    // complete it everywhere.
    void fence_gathered(const std::string& puts) {
        auto merged = shell::records::parse_key_values(puts);
        if (!merged) {
            events_.exception("exec", Error("", "the PMI barrier's puts: " + merged.error().str()));
            terminate();
            return;
        }
        complete_fence(shell::records::encode_key_values(*merged));
    }

    // Rank 0's own shell, while it runs.
    Execution* local_shell() {
        for (Part& part : parts_)
            if (part.local && !part.ended)
                return part.local.get();
        return nullptr;
    }

    // Stdin goes to the job's first rank, where its rank 0 task runs. That
    // broker answers each exec.stdin once its queue has room.
    Status write_stdin(std::string_view bytes) override {
        Part& first = parts_.front();
        if (first.local)
            return first.local->write_stdin(bytes);
        ++stdin_on_its_way_;
        Json params{{"job", job_}, {"eof", false}};
        put_data(params, bytes);
        peers_.call(first.rank, "exec.stdin", params,
                    [weak = weak_from_this()](const overlay::Reply& reply) {
                        const auto self = weak.lock();
                        if (!self || reply.more)
                            return;
                        if (--self->stdin_on_its_way_ == 0)
                            for (auto& room : std::exchange(self->waiting_for_stdin_room_, {}))
                                room();
                    });
        return {};
    }

    void when_stdin_room(std::function<void()> room) override {
        Part& first = parts_.front();
        if (first.local)
            first.local->when_stdin_room(std::move(room));
        else if (stdin_on_its_way_ == 0)
            asio::post(loop_, std::move(room));
        else
            waiting_for_stdin_room_.push_back(std::move(room));
    }

    void close_stdin() override {
        Part& first = parts_.front();
        if (first.local)
            first.local->close_stdin();
        else
            send(first, "exec.stdin", {{"job", job_}, {"data", ""}, {"eof", true}});
    }

private:
    Part* part_of(std::uint32_t rank) {
        for (Part& part : parts_)
            if (part.rank == rank)
                return &part;
        return nullptr;
    }

    void send(const Part& part, std::string method, Json params) {
        peers_.call(part.rank, std::move(method), std::move(params), [](const overlay::Reply&) {});
    }

    ExecEvents local_events(std::uint32_t rank) {
        ExecEvents events;
        events.started = [this, rank] { part_started(rank); };
        events.released = [](std::uint32_t) {};  // part_ended says it
        events.exception = [this](std::string_view type, const Error& error) {
            events_.exception(type, error);
        };
        events.finished = [this, rank](int status) { part_ended(rank, status); };
        events.output = [this](const ShellOutput& output) { events_.output(output); };
        events.task_end = [this](const TaskEnd& end) { events_.task_end(end); };
        events.fence = [this](std::uint32_t, std::string puts) {
            fenced_once_ = true;
            fences_.contribute(job_, ranks_, puts);
        };
        events.modex = [this](std::uint32_t, std::uint32_t task, std::uint32_t node,
                              const std::string& key) { ask_modex(task, node, key); };
        return events;
    }

    void ask_modex(std::uint32_t task, std::uint32_t node, const std::string& key) {
        const auto rank = ranks_.nth(node);
        if (!rank) {
            if (Execution* shell = local_shell())
                shell->answer_modex(task, std::nullopt);
            return;
        }
        std::weak_ptr<InstanceExecution> self = weak_from_this();
        modex_.ask(job_, static_cast<std::uint32_t>(*rank), task, key,
                   [self, task](std::optional<std::string> data) {
                       if (const auto execution = self.lock())
                           if (Execution* shell = execution->local_shell())
                               shell->answer_modex(task, std::move(data));
                   });
    }

    void on_reply(std::uint32_t rank, const overlay::Reply& reply) {
        if (!reply.result) {
            // The rank's broker could not run its part, or was lost.
            const std::string message = reply.message.value_or("gantry: no reply");
            const bool lost = reply.error_type == kNodeFailure;
            events_.exception(
                lost ? kNodeFailure : "exec",
                Error("", message.starts_with("gantry: ") ? message.substr(8) : message));
            if (lost)
                terminate();
            part_ended(rank, kLostStatus);
            return;
        }
        const Json& event = *reply.result;
        const std::string name = event.value("event", "");
        if (name == "started") {
            part_started(rank);
        } else if (name == "output") {
            const auto kind = stream_kind(event.value("stream", ""));
            auto bytes = data_of(event);
            if (kind && bytes)
                events_.output(
                    ShellOutput{job_, rank, *kind, event.value("task", 0u), std::move(*bytes)});
        } else if (name == "task-ends") {
            for (const Json& end : event.value("ends", Json::array()))
                if (end.is_array() && end.size() == 2 && end[0].is_number_unsigned() &&
                    end[1].is_number_integer())
                    events_.task_end(
                        TaskEnd{job_, rank, end[0].get<std::uint32_t>(), end[1].get<int>()});
        } else if (name == "pmi") {
            fenced_once_ = true;
        } else if (name == "exception") {
            events_.exception("exec", Error("", event.value("message", "")));
        } else if (name == "finished") {
            part_ended(rank, event.value("status", 0));
        }
    }

    void part_started(std::uint32_t rank) {
        if (Part* part = part_of(rank))
            part->started = true;
        if (started_ || !all_parts([](const Part& p) { return p.started; }))
            return;
        started_ = true;
        events_.started();
    }

    void part_ended(std::uint32_t rank, int status) {
        Part* part = part_of(rank);
        if (!part || part->ended)
            return;
        part->ended = true;
        if (!status_ || shell::exit_code_of(*status_) == 0)
            status_ = status;
        events_.released(rank);
        // As one node's shell ends the job when a task leaves its PMI peers
        // waiting (or aborts), or fails under --kill-on-bad-exit, a node
        // that fails so ends the others' part.
        if (shell::exit_code_of(status) != 0 && (fenced_once_ || kill_on_bad_exit_) &&
            !terminated_) {
            terminated_ = true;
            terminate();
        }
        if (!all_parts([](const Part& p) { return p.ended; }))
            return;
        // Posted: the job manager lets go of this execution when it hears
        // of its end.
        asio::post(loop_, [finished = events_.finished, status = *status_,
                           alive = std::weak_ptr<InstanceExecution>(weak_from_this())] {
            if (alive.lock())
                finished(status);
        });
    }

    template <class Test>
    bool all_parts(Test test) const {
        for (const Part& part : parts_)
            if (!test(part))
                return false;
        return true;
    }

    asio::io_context& loop_;
    Peers& peers_;
    FenceTree& fences_;
    DirectModex& modex_;
    JobId job_;
    IdSet ranks_;  // R's
    ExecEvents events_;
    std::vector<Part> parts_;
    bool started_ = false;
    std::optional<int> status_;
    bool kill_on_bad_exit_ = false;
    bool fenced_once_ = false;  // the tasks speak PMI
    // exec.stdin calls not answered yet, and who waits for them all to be.
    std::size_t stdin_on_its_way_ = 0;
    std::vector<std::function<void()>> waiting_for_stdin_room_;
    bool terminated_ = false;
};

// The job manager holds an Execution by unique_ptr; the execution itself
// is shared so that replies arriving after it is gone find nothing.
class ExecutionHandle : public Execution {
public:
    explicit ExecutionHandle(std::shared_ptr<InstanceExecution> execution)
        : execution_(std::move(execution)) {}
    void signal(int number) override { execution_->signal(number); }
    void terminate() override { execution_->terminate(); }
    void complete_fence(const std::string& merged) override { execution_->complete_fence(merged); }
    Status write_stdin(std::string_view bytes) override { return execution_->write_stdin(bytes); }
    void close_stdin() override { execution_->close_stdin(); }
    void when_stdin_room(std::function<void()> room) override {
        execution_->when_stdin_room(std::move(room));
    }

private:
    std::shared_ptr<InstanceExecution> execution_;
};

class InstanceExecService : public ExecService {
public:
    InstanceExecService(asio::io_context& loop, std::string program, RankTopologies topologies,
                        Broker& broker, Peers& peers, const overlay::Tree& tree, RanksUp ranks_up)
        : loop_(loop),
          program_(std::move(program)),
          topologies_(std::move(topologies)),
          peers_(peers),
          ranks_up_(std::move(ranks_up)),
          fences_(
              broker, peers, tree, [](std::uint64_t, const std::string&) {},
              [this](std::uint64_t job, std::string puts) { fence_gathered(job, puts); }),
          modex_(loop, broker, peers, [this](std::uint64_t job) -> Execution* {
              const auto found = executions_.find(job);
              const auto execution = found == executions_.end() ? nullptr : found->second.lock();
              return execution ? execution->local_shell() : nullptr;
          }) {}

    Result<std::unique_ptr<Execution>> start(const ExecRequest& request,
                                             ExecEvents events) override {
        if (auto served = check_ranks_have_brokers(
                request.R, ranks_up_(), static_cast<std::uint32_t>(topologies_.ranks().count()));
            !served)
            return Error("job " + std::to_string(request.job), served.error().message());
        const Json topologies = topologies_.only(request.R.ranks()).to_json();
        const bool kill_on_bad_exit =
            request.jobspec.value("attributes", Json::object()).value("kill_on_bad_exit", false);
        auto execution = std::make_shared<InstanceExecution>(loop_, peers_, fences_, modex_,
                                                             request.job, request.R.ranks(),
                                                             kill_on_bad_exit, std::move(events));
        std::erase_if(executions_, [](const auto& entry) { return entry.second.expired(); });
        executions_[request.job] = execution;
        for (const auto& [rank, target] : request.R.targets()) {
            if (rank == 0) {
                if (auto started = execution->start_local(loop_, program_, request, topologies);
                    !started)
                    return started.error();
                modex_.shell_started(request.job);
            } else {
                execution->start_remote(rank, request, topologies);
            }
        }
        return std::unique_ptr<Execution>(std::make_unique<ExecutionHandle>(std::move(execution)));
    }

private:
    void fence_gathered(std::uint64_t job, const std::string& puts) {
        const auto found = executions_.find(job);
        if (found == executions_.end())
            return;
        if (const auto execution = found->second.lock())
            execution->fence_gathered(puts);
    }

    asio::io_context& loop_;
    std::string program_;
    RankTopologies topologies_;
    Peers& peers_;
    RanksUp ranks_up_;
    FenceTree fences_;
    DirectModex modex_;
    std::map<std::uint64_t, std::weak_ptr<InstanceExecution>> executions_;
};

}  // namespace

std::unique_ptr<ExecService> make_instance_exec_service(asio::io_context& loop,
                                                        std::string shell_program,
                                                        RankTopologies topologies, Broker& broker,
                                                        Peers& peers, const overlay::Tree& tree,
                                                        RanksUp ranks_up) {
    return std::make_unique<InstanceExecService>(loop, std::move(shell_program),
                                                 std::move(topologies), broker, peers, tree,
                                                 std::move(ranks_up));
}

// --- At the other ranks ------------------------------------------------------

struct NodeExec::Running {
    std::unique_ptr<Execution> execution;
    Responder responder;
};

NodeExec::NodeExec(asio::io_context& loop, Broker& broker, Peers& peers, const overlay::Tree& tree,
                   std::string shell_program)
    : loop_(loop),
      broker_(broker),
      peers_(peers),
      shell_program_(std::move(shell_program)),
      fences_(broker, peers, tree,
              [this](std::uint64_t job, const std::string& merged) {
                  if (const auto found = executions_.find(job); found != executions_.end())
                      found->second->execution->complete_fence(merged);
              }),
      modex_(loop, broker, peers, [this](std::uint64_t job) -> Execution* {
          const auto found = executions_.find(job);
          return found == executions_.end() ? nullptr : found->second->execution.get();
      }) {
    broker_.register_method(
        "exec.start",
        [this](const overlay::Message& request, Responder responder) {
            start(request, std::move(responder));
        },
        ServedOn::kEveryRank);
    broker_.register_method(
        "exec.signal",
        [this](const overlay::Message& request, Responder responder) {
            if (Running* running = find(request, responder)) {
                running->execution->signal(request.params.value("signal", SIGTERM));
                responder.result(Json::object());
            }
        },
        ServedOn::kEveryRank);
    broker_.register_method(
        "exec.terminate",
        [this](const overlay::Message& request, Responder responder) {
            if (Running* running = find(request, responder)) {
                running->execution->terminate();
                responder.result(Json::object());
            }
        },
        ServedOn::kEveryRank);
    broker_.register_method(
        "exec.stdin",
        [this](const overlay::Message& request, Responder responder) {
            Running* running = find(request, responder);
            if (!running)
                return;
            auto bytes = data_of(request.params);
            if (!bytes) {
                responder.error(Error("exec.stdin", bytes.error().str()));
                return;
            }
            if (!bytes->empty())
                (void)running->execution->write_stdin(*bytes);
            if (request.params.value("eof", false))
                running->execution->close_stdin();
            // Answered once the shell's stdin has room: rank 0 waits for
            // it before it takes more (InstanceExecution::write_stdin).
            running->execution->when_stdin_room(
                [responder]() mutable { responder.result(Json::object()); });
        },
        ServedOn::kEveryRank);
}

NodeExec::~NodeExec() {
    kill_all();
}

void NodeExec::kill_all() {
    // Destroying an execution kills what is left of it at once.
    executions_.clear();
}

NodeExec::Running* NodeExec::find(const overlay::Message& request, Responder& responder) {
    auto job = job_of(request);
    if (!job) {
        responder.error(job.error());
        return nullptr;
    }
    const auto found = executions_.find(*job);
    if (found == executions_.end()) {
        // Its shell has ended already: nothing is left to signal.
        responder.result(Json::object());
        return nullptr;
    }
    return found->second.get();
}

void NodeExec::start(const overlay::Message& request, Responder responder) {
    auto job = job_of(request);
    if (!job) {
        responder.error(job.error());
        return;
    }
    if (executions_.contains(*job)) {
        responder.error(Error("exec.start", "job " + std::to_string(*job) + " runs here already"));
        return;
    }
    auto R = ResourceSet::from_json(request.params.value("R", Json()));
    if (!R) {
        responder.error(Error("exec.start", "R: " + R.error().str()));
        return;
    }
    const ExecRequest exec{*job, std::move(*R), request.params.value("jobspec", Json::object()),
                           request.params.value("map_inputs", Json())};
    const std::uint64_t id = *job;
    // Every reply goes through `replies`, which sends the task ends held
    // first: a task's output still comes before its end.
    auto replies = std::make_shared<EventReplies>(loop_, responder);
    ExecEvents events;
    events.started = [replies] { replies->more({{"event", "started"}}); };
    events.released = [](std::uint32_t) {};
    events.exception = [replies](std::string_view, const Error& error) {
        replies->more({{"event", "exception"}, {"message", error.str()}});
    };
    events.output = [replies](const ShellOutput& output) {
        Json event{
            {"event", "output"}, {"stream", stream_name(output.kind)}, {"task", output.task_rank}};
        put_data(event, output.bytes);
        replies->more(std::move(event));
    };
    // Output goes up to rank 0 no faster than the way up takes it.
    events.hold_output = [this](std::function<void()> resume) {
        overlay::Overlay& overlay = peers_.overlay();
        if (!overlay.parent_congested())
            return false;
        overlay.when_parent_has_room(std::move(resume));
        return true;
    };
    events.task_end = [replies](const TaskEnd& end) { replies->task_end(end); };
    // The barrier goes up the tree; rank 0 hears once that the job's
    // tasks speak PMI (a node that fails then ends the others').
    events.fence = [this, id, ranks = exec.R.ranks(), replies, told = false](
                       std::uint32_t, std::string puts) mutable {
        if (!told)
            replies->more({{"event", "pmi"}});
        told = true;
        fences_.contribute(id, ranks, puts);
    };
    events.modex = [this, id, ranks = exec.R.ranks()](std::uint32_t, std::uint32_t task,
                                                      std::uint32_t node, const std::string& key) {
        const auto rank = ranks.nth(node);
        auto answer = [this, alive = std::weak_ptr<bool>(alive_), id,
                       task](std::optional<std::string> data) {
            if (!alive.lock())
                return;
            if (const auto found = executions_.find(id); found != executions_.end())
                found->second->execution->answer_modex(task, std::move(data));
        };
        if (rank)
            modex_.ask(id, static_cast<std::uint32_t>(*rank), task, key, std::move(answer));
        else
            answer(std::nullopt);
    };
    events.finished = [this, id, replies](int status) {
        replies->result({{"event", "finished"}, {"status", status}});
        fences_.forget(id);
        executions_.erase(id);
    };
    auto execution =
        start_node_shell(loop_, shell_program_, broker_.rank(), exec,
                         request.params.value("topologies", Json::array()), std::move(events));
    if (!execution) {
        responder.error(execution.error());
        return;
    }
    executions_[id] = std::make_unique<Running>(Running{std::move(*execution), responder});
    modex_.shell_started(id);
}

}  // namespace gantry::broker
