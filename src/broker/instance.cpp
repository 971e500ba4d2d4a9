#include "broker/instance.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <utility>

#include "broker/exec.h"
#include "broker/remote_exec.h"
#include "shell/clone_into.h"
#include "shell/exit_status.h"
#include "shell/fd.h"
#include "topo/topology.h"
#include "util/duration.h"
#include "util/file.h"

extern char** environ;

namespace gantry::broker {

namespace {

constexpr std::string_view kDomain = "instance";
constexpr std::string_view kLockFile = "lock";
constexpr std::string_view kSocketFile = "socket";

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

Error system_error(const std::string& what, int number) {
    return error(what + ": " + std::strerror(number));
}

std::string user_name(uid_t uid) {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
        return found->pw_name;
    return std::to_string(uid);
}

// A given state directory, made absolute, created 0700 when missing.
Result<std::string> make_state_dir(const std::string& given) {
    std::error_code failure;
    const auto path = std::filesystem::absolute(given, failure).lexically_normal();
    if (failure)
        return error("state directory " + given + ": " + failure.message());
    std::string dir = path.string();
    if (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    if (std::filesystem::exists(path, failure)) {
        if (!std::filesystem::is_directory(path, failure))
            return error("state directory " + dir + " is not a directory");
        return dir;
    }
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path(), failure);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return system_error("cannot create state directory " + dir, errno);
    return dir;
}

constexpr std::string_view kTemporaryPrefix = "gantry-";  // then mkdtemp's 6 characters
// In a temporary state directory only: what tells it from a kept one of
// the same form of name (--state-dir /tmp/gantry-jobs01).
constexpr std::string_view kTemporaryMark = "temporary";

// The lock of the temporary state directory `dir`, taken, when the
// instance that made it is gone: the directory is marked temporary, the
// lock is this user's, names a pid (it was taken once: one being made
// names none yet), and nobody holds it. Held until closed.
std::optional<shell::Fd> abandoned_lock(const std::filesystem::path& dir) {
    struct stat st {};
    if (::lstat((dir / kTemporaryMark).c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid())
        return std::nullopt;
    shell::Fd lock(::open((dir / kLockFile).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    char pid = 0;
    if (!lock || ::fstat(lock.get(), &st) != 0 || st.st_uid != ::geteuid() ||
        ::pread(lock.get(), &pid, 1, 0) != 1 || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0)
        return std::nullopt;
    return lock;
}

// The temporary state directories in `base` of instances that were killed
// (SIGKILL leaves no time to remove one): this user's, unlocked. Those in
// use, another user's and anything else are left alone.
void remove_abandoned_temporary_dirs(const std::string& base) {
    std::error_code failure;
    for (const auto& entry : std::filesystem::directory_iterator(base, failure)) {
        const std::string name = entry.path().filename().string();
        if (name.size() != kTemporaryPrefix.size() + 6 || !name.starts_with(kTemporaryPrefix) ||
            !entry.is_directory(failure) || entry.is_symlink(failure))
            continue;
        if (const auto lock = abandoned_lock(entry.path()))
            std::filesystem::remove_all(entry.path(), failure);
    }
}

// A private directory under $TMPDIR (else /tmp), mode 0700, marked
// temporary; those left there by killed instances go first.
Result<std::string> make_temporary_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string dir = (base && *base == '/' ? std::string(base) : std::string("/tmp"));
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    remove_abandoned_temporary_dirs(dir);
    dir += "/" + std::string(kTemporaryPrefix) + "XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr)
        return system_error("cannot create a state directory like " + dir, errno);
    const std::string mark = dir + "/" + std::string(kTemporaryMark);
    const shell::Fd marked(::open(mark.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!marked) {
        const int number = errno;
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
        return system_error("cannot create " + mark, number);
    }
    return dir;
}

// Locks DIR/lock for this process and writes its pid there; the lock goes
// when the process does.
Result<int> lock_state_dir(const std::string& dir) {
    const std::string path = dir + "/" + std::string(kLockFile);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return system_error("cannot open " + path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int number = errno;
        char pid[32] = {};
        const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
        ::close(fd);
        if (number != EWOULDBLOCK)
            return system_error("cannot lock " + path, number);
        std::string holder(pid, n > 0 ? static_cast<std::size_t>(n) : 0);
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' '))
            holder.pop_back();
        return error("state directory " + dir + " is in use by another instance" +
                     (holder.empty() ? std::string() : " (pid " + holder + ")"));
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        const int number = errno;
        ::close(fd);
        return system_error("cannot write " + path, number);
    }
    return fd;
}

// The terminal's foreground process group becomes `group`; SIGTTOU, which a
// background process would get for this, is held back meanwhile.
void give_terminal(pid_t group) {
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    ::tcsetpgrp(STDIN_FILENO, group);
    sigprocmask(SIG_SETMASK, &old, nullptr);
}

// What is said when `signal` ends an instance before every broker joined.
std::string interrupted_before_ready(int signal) {
    const char* name = ::sigabbrev_np(signal);
    return std::string("SIG") + (name ? name : "?") +
           " before every broker joined: the initial program did not run";
}

}  // namespace

Result<ResourceSet> local_inventory(const Topology& machine) {
    Target node;
    node.hostname = local_hostname();
    if (machine.ncores() > 0)
        node.cores = IdSet::range(0, machine.ncores() - 1);
    if (machine.ngpus() > 0)
        node.gpus = IdSet::range(0, machine.ngpus() - 1);
    ResourceSet inventory;
    if (auto status = inventory.insert(0, node); !status)
        return status.error();
    return inventory;
}

Status assign_topology(RankTopologies& topologies, std::uint32_t rank, const Target& target,
                       const Topology& node, std::map<unsigned, Topology>& synthetic,
                       bool simulated) {
    const unsigned ncores = target.cores.empty() ? 0 : *target.cores.last() + 1;
    if (ncores <= node.ncores()) {
        topologies.assign(IdSet{rank}, node, simulated);
        return {};
    }
    auto found = synthetic.find(ncores);
    if (found == synthetic.end()) {
        auto made = Topology::from_synthetic("package:1 core:" + std::to_string(ncores) + " pu:1");
        if (!made)
            return made.error();
        found = synthetic.emplace(ncores, std::move(*made)).first;
    }
    topologies.assign(IdSet{rank}, found->second, true);
    return {};
}

Result<RankTopologies> local_topologies(const ResourceSet& inventory, const Topology& machine) {
    RankTopologies topologies;
    std::map<unsigned, Topology> synthetic;
    for (const auto& [rank, target] : inventory.targets())
        if (auto assigned = assign_topology(topologies, rank, target, machine, synthetic);
            !assigned)
            return assigned.error();
    return topologies;
}

// --- Opening and closing -----------------------------------------------------

Instance::Instance(InstanceOptions options, std::string state_dir, bool temporary, int lock_fd)
    : options_(std::move(options)),
      state_dir_(std::move(state_dir)),
      temporary_(temporary),
      lock_fd_(lock_fd),
      broker_(loop_, ::getuid(), options_.bootstrap ? options_.bootstrap->rank() : 0),
      signals_(loop_) {}

Result<std::unique_ptr<Instance>> Instance::open(InstanceOptions options) {
    const bool temporary = !options.state_dir;
    auto dir = temporary ? make_temporary_dir() : make_state_dir(*options.state_dir);
    if (!dir)
        return dir.error();
    auto lock = lock_state_dir(*dir);
    if (!lock) {
        if (temporary)
            std::filesystem::remove_all(*dir);
        return lock.error();
    }
    // The destructor cleans up from here on.
    std::unique_ptr<Instance> instance(new Instance(std::move(options), *dir, temporary, *lock));
    // A socket left by a broker that died: the lock says none uses it now.
    const std::string socket = *dir + "/" + std::string(kSocketFile);
    if (::unlink(socket.c_str()) != 0 && errno != ENOENT)
        return system_error("cannot remove the old socket " + socket, errno);
    if (auto listening = instance->broker_.listen(socket); !listening)
        return listening.error();
    std::string program = instance->options_.shell_program;
    if (program.empty()) {
        auto found = job_shell_program();
        if (!found)
            return found.error();
        program = std::move(*found);
    }
    instance->shell_program_ = program;
    instance->register_methods();
    // While the other ranks join, if any: its creation is then neither on
    // the way to answering them nor from the last join to the first job.
    Store::Options store_options;
    store_options.temporary = temporary;
    instance->store_ =
        std::async(instance->options_.bootstrap ? std::launch::async : std::launch::deferred,
                   [path = std::filesystem::path(*dir) / Store::kFileName, store_options] {
                       return Store::open(path, store_options);
                   });
    const auto machine = [&options = instance->options_]() -> Result<Topology> {
        if (options.machine_topology)
            return *options.machine_topology;
        return Topology::local();
    };
    if (instance->options_.bootstrap) {
        // Nor is this node's topology.
        instance->own_topology_.emplace(
            instance->options_.topology_xml
                ? Topology::from_xml_text(*instance->options_.topology_xml)
                : machine());
        if (auto joined = instance->join_overlay(); !joined)
            return joined.error();
        return instance;
    }
    const Result<Topology> topology = machine();
    if (!topology)
        return topology.error();
    auto topologies = local_topologies(instance->options_.inventory, *topology);
    if (!topologies)
        return topologies.error();
    if (auto opened = instance->open_jobs(instance->options_.inventory, *topologies); !opened)
        return opened.error();
    instance->ready_ = true;
    return instance;
}

Status Instance::open_jobs(const ResourceSet& inventory, const RankTopologies& topologies) {
    std::unique_ptr<ExecService> exec_service;
    if (membership_)
        exec_service = make_instance_exec_service(loop_, shell_program_, topologies, broker_,
                                                  membership_->peers(), membership_->tree(),
                                                  [this] { return up_; });
    else
        exec_service = make_local_exec_service(loop_, shell_program_, 0, topologies);
    Result<Store> store = store_.get();
    if (!store)
        return store.error();
    auto jobs = JobManager::open(loop_, broker_, std::move(*store), inventory, topologies,
                                 std::move(exec_service));
    if (!jobs)
        return jobs.error();
    jobs_ = std::move(*jobs);
    return {};
}

// --- Many brokers ------------------------------------------------------------

Status Instance::join_overlay() {
    register_overlay_methods();
    Membership::Events events;
    events.lost = [this](const IdSet& ranks, const std::string& why) { ranks_lost(ranks, why); };
    events.refused = [](const std::string& why) {
        std::cerr << "gantry: instance: " << why << '\n';
    };
    // Launched brokers join as they are answered; the time to join runs
    // from when the last is.
    events.launched = [this](const Status& answered) {
        if (answered) {
            start_join_timer();
            return;
        }
        if (ending_)
            return;
        std::cerr << "gantry: " << answered.error().str() << '\n';
        exit_code_ = 1;
        end();
    };
    auto membership =
        Membership::join(loop_, broker_, *options_.bootstrap, options_.membership, events);
    if (!membership)
        return membership.error();
    membership_ = std::move(*membership);
    up_ = IdSet{0};
    join_timer_ = std::make_unique<asio::steady_timer>(loop_);
    if (!options_.bootstrap->launched())
        start_join_timer();
    return {};
}

void Instance::start_join_timer() {
    join_timer_->expires_after(options_.join_timeout);
    join_timer_->async_wait([this](const asio::error_code& failure) {
        if (failure || ready_)
            return;
        const IdSet missing = IdSet::range(0, membership_->size() - 1) - up_;
        std::cerr << "gantry: instance: rank" << (missing.count() > 1 ? "s " : " ")
                  << missing.encode() << " did not join within "
                  << format_duration(options_.join_timeout) << "\n";
        exit_code_ = 1;
        end();
    });
}

void Instance::register_overlay_methods() {
    broker_.register_method("broker.join",
                            [this](const overlay::Message& request, Responder responder) {
                                rank_joined(request, responder);
                            });
    broker_.register_method(
        "broker.lost", [this](const overlay::Message& request, Responder responder) {
            auto ranks = IdSet::parse(request.params.value("ranks", ""));
            if (!ranks) {
                responder.error(Error("broker.lost", ranks.error().str()));
                return;
            }
            responder.result(Json::object());
            membership_->peers().lost(*ranks, request.params.value("why", "lost"));
            ranks_lost(*ranks, request.params.value("why", "lost"));
        });
}

void Instance::rank_joined(const overlay::Message& request, Responder& responder) {
    const auto rank = request.params.value("rank", overlay::Rank{0});
    if (rank == 0 || rank >= membership_->size()) {
        responder.error(Error("broker.join", "rank " + std::to_string(rank) +
                                                 " is not a rank of this instance of " +
                                                 std::to_string(membership_->size())));
        return;
    }
    if (up_.contains(rank)) {
        responder.error(Error("broker.join", "rank " + std::to_string(rank) + " is up already"));
        return;
    }
    if (ready_) {
        // A broker restarted after its node was lost: the node comes back,
        // as the inventory has it.
        up_.insert(rank);
        lost_why_.erase(rank);
        jobs_->nodes_up(IdSet{rank});
        std::cerr << "gantry: instance: rank " << rank << " is back\n";
        responder.result(Json::object());
        return;
    }
    joined_[rank] =
        Joined{request.params.value("hostname", ""), request.params.value("topology", ""),
               request.params.value("simulated", false)};
    up_.insert(rank);
    responder.result(Json::object());
    if (up_.count() == membership_->size())
        all_joined();
}

namespace {

// The properties `from` gives (name -> ranks) added to the ranks of `inventory`.
Status add_properties(ResourceSet& inventory, const std::map<std::string, IdSet>& properties,
                      const std::string& from) {
    for (const auto& [name, ranks] : properties)
        if (const IdSet present = ranks & inventory.ranks(); !present.empty())
            if (auto added = inventory.set_property(name, present); !added)
                return error(from + ": " + added.error().message());
    return {};
}

}  // namespace

void Instance::all_joined() {
    ready_ = true;
    join_timer_->cancel();
    // Rank 0's node first, then the others as they said they are.
    ResourceSet inventory;
    RankTopologies topologies;
    const bool own_simulated = options_.topology_xml.has_value();
    const Result<Topology>& own = *own_topology_;
    if (!own) {
        std::cerr << "gantry: " << own.error().str() << '\n';
        exit_code_ = 1;
        end();
        return;
    }
    const ResourceSet& given = options_.inventory;
    std::map<unsigned, Topology> synthetic;
    const auto add = [&](overlay::Rank rank, const std::string& hostname, const Topology& topology,
                         bool simulated) -> Status {
        if (given.nnodes() > 1) {
            const Target* target = given.find(rank);
            if (!target)
                return error("--resources names no rank " + std::to_string(rank));
            if (auto assigned =
                    assign_topology(topologies, rank, *target, topology, synthetic, simulated);
                !assigned)
                return assigned;
            return inventory.insert(rank, *target);
        }
        topologies.assign(IdSet{rank}, topology, simulated);
        Target node;
        node.hostname = hostname;
        if (topology.ncores() > 0)
            node.cores = IdSet::range(0, topology.ncores() - 1);
        if (topology.ngpus() > 0)
            node.gpus = IdSet::range(0, topology.ngpus() - 1);
        return inventory.insert(rank, node);
    };
    const Target* zero = given.find(0);
    Status status = options_.rank_zero_runs_jobs
                        ? add(0, zero ? zero->hostname : local_hostname(), *own, own_simulated)
                        : Status{};
    // Nodes alike (most clusters' are) share one load, hence one group of
    // RankTopologies: each job shell then reads one XML document, not one
    // per node.
    std::map<std::string, Topology, std::less<>> loaded{{own->to_xml(), *own}};
    for (const auto& [rank, joined] : joined_) {
        if (!status)
            break;
        auto found = loaded.find(joined.topology_xml);
        if (found == loaded.end()) {
            auto topology = Topology::from_xml_text(joined.topology_xml);
            if (!topology) {
                status = error("the topology of rank " + std::to_string(rank) + ": " +
                               topology.error().str());
                break;
            }
            found = loaded.emplace(joined.topology_xml, std::move(*topology)).first;
        }
        status = add(rank, joined.hostname, found->second, joined.simulated);
    }
    if (status)
        status = add_properties(inventory, given.properties(), "--resources");
    if (status)
        status = add_properties(inventory, options_.bootstrap->properties(), "--config");
    if (status)
        status = open_jobs(inventory, topologies);
    if (!status) {
        std::cerr << "gantry: " << status.error().str() << '\n';
        exit_code_ = 1;
        end();
        return;
    }
    options_.inventory = std::move(inventory);
    if (!options_.initial_program.empty()) {
        if (auto started = spawn_initial_program(); !started) {
            std::cerr << "gantry: " << started.error().str() << '\n';
            exit_code_ = 1;
            end();
        }
    }
}

void Instance::ranks_lost(const IdSet& ranks, const std::string& why) {
    const IdSet down = up_ & ranks;
    if (down.empty())
        return;
    up_ -= down;
    for (const overlay::Rank rank : down)
        lost_why_[rank] = why;
    if (jobs_)
        jobs_->nodes_down(down);
    if (ending_)
        return;  // they were told to go
    std::cerr << "gantry: instance: rank" << (down.count() > 1 ? "s " : " ") << down.encode()
              << " lost: " << why << '\n';
    if (!ready_) {
        exit_code_ = 1;
        end();
    }
}

// broker.shutdown down the tree; `done` once rank 0's children have
// answered (each after its own children), or after a grace period.
void Instance::shut_down_brokers(std::function<void()> done) {
    if (!membership_) {
        done();
        return;
    }
    const auto children = membership_->overlay().children_up();
    if (children.empty()) {
        done();
        return;
    }
    auto waiting = std::make_shared<std::size_t>(children.size());
    auto finish = std::make_shared<std::function<void()>>(std::move(done));
    for (const overlay::Rank child : children)
        membership_->peers().call(child, "broker.shutdown", Json::object(),
                                  [waiting, finish](const overlay::Reply& reply) {
                                      if (reply.more || --*waiting != 0 || !*finish)
                                          return;
                                      std::exchange(*finish, nullptr)();
                                  });
    auto grace = std::make_shared<asio::steady_timer>(loop_, std::chrono::seconds(3));
    grace->async_wait([grace, finish](const asio::error_code&) {
        if (*finish)
            std::exchange(*finish, nullptr)();
    });
}

Instance::~Instance() {
    // Not while the store is being made in the state directory; one whose
    // making was deferred (one broker) is not made now.
    if (store_.valid() && store_.wait_for(std::chrono::seconds(0)) != std::future_status::deferred)
        store_.wait();
    if (!broker_.uri().empty())
        ::unlink((state_dir_ + "/" + std::string(kSocketFile)).c_str());
    if (temporary_) {
        std::error_code ignored;
        std::filesystem::remove_all(state_dir_, ignored);
    }
    ::close(lock_fd_);
    // Then the members: the broker disconnects its clients, which thus see
    // the end only once the files are gone.
}

// --- Methods -----------------------------------------------------------------

void Instance::register_methods() {
    broker_.register_method("instance.info", [this](const overlay::Message&, Responder responder) {
        responder.result(info());
    });
    broker_.register_method("overlay.status", [this](const overlay::Message&, Responder responder) {
        responder.result(overlay_status());
    });
    broker_.register_method(
        "instance.shutdown", [this](const overlay::Message& request, Responder responder) {
            bool force = false;
            if (const auto found = request.params.find("force"); found != request.params.end()) {
                if (!found->is_boolean()) {
                    responder.error(
                        Error("instance.shutdown",
                              "\"force\" is " + json_type_name(*found) + ", expected a boolean"));
                    return;
                }
                force = found->get<bool>();
            }
            if (initial_pid_ > 0 && !force) {
                responder.error(shutdown(false).error());
                return;
            }
            // The reply goes first: the broker stops answering once it ends.
            responder.result(Json::object());
            (void)shutdown(force);
        });
}

Json Instance::info() const {
    const double uptime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const uid_t owner = broker_.owner();
    const JobCounts counts = jobs_ ? jobs_->counts() : JobCounts{};
    Json info{
        {"uri", broker_.uri()},
        {"owner", {{"uid", owner}, {"name", user_name(owner)}}},
        {"pid", ::getpid()},
        {"state_dir", state_dir_},
        {"size", options_.inventory.nnodes()},

        {"cores", options_.inventory.ncores()},
        {"gpus", options_.inventory.ngpus()},
        {"uptime", uptime},
        {"jobs",
         {{"pending", counts.pending}, {"running", counts.running}, {"inactive", counts.inactive}}},
    };
    // An instance of many brokers says which are up.
    if (membership_)
        info["brokers"] = {{"size", membership_->size()},
                           {"up", up_.encode()},
                           {"fanout", membership_->tree().fanout}};
    return info;
}

Json Instance::overlay_status() const {
    const overlay::Rank size = membership_ ? membership_->size() : 1;
    Json ranks = Json::array();
    const auto drained = jobs_ ? jobs_->drained() : std::map<std::uint32_t, std::string>{};
    for (overlay::Rank rank = 0; rank < size; ++rank) {
        Json entry = {{"rank", rank}};
        if (membership_) {
            const auto parent = membership_->tree().parent(rank);
            entry["parent"] = parent ? Json(*parent) : Json();
        } else {
            entry["parent"] = Json();
        }
        // The host as R names it (a child instance's are its parent's
        // nodes), else as the broker said when it joined.
        const Target* target = options_.inventory.find(rank);
        const auto joined = joined_.find(rank);
        entry["host"] = target && !target->hostname.empty() ? target->hostname
                        : rank == 0                         ? local_hostname()
                        : joined != joined_.end()           ? joined->second.hostname
                                                            : std::string();
        if (up_.contains(rank) && drained.contains(rank)) {
            entry["state"] = "drained";
            entry["why"] = drained.at(rank);
        } else if (up_.contains(rank)) {
            entry["state"] = "up";
        } else if (const auto lost = lost_why_.find(rank); lost != lost_why_.end()) {
            entry["state"] = "lost";
            entry["why"] = lost->second;
        } else {
            entry["state"] = "joining";
        }
        ranks.push_back(std::move(entry));
    }
    return {{"size", size},
            {"fanout", membership_ ? Json(membership_->tree().fanout) : Json()},
            {"ranks", std::move(ranks)}};
}

Status Instance::shutdown(bool force) {
    if (initial_pid_ > 0) {
        if (!force)
            return Error("instance.shutdown",
                         "the initial program is running (pid " + std::to_string(initial_pid_) +
                             "); --force sends it SIGTERM and the instance ends with it");
        if (!terminated_)
            ::kill(-initial_pid_, SIGTERM);
        terminated_ = true;
        return {};
    }
    end();
    return {};
}

// --- Running -----------------------------------------------------------------

Result<int> Instance::run() {
    // A client that has gone must not end the broker.
    struct sigaction ignore {};
    struct sigaction old_sigpipe {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_sigpipe);
    catch_signals();
    // Some are held while the hosts are reached (overlay/launch_agent.h):
    // from here on they are handled, those that came meanwhile included.
    sigset_t handled;
    sigemptyset(&handled);
    for (const int signal : kForwardedSignals)
        sigaddset(&handled, signal);
    ::pthread_sigmask(SIG_UNBLOCK, &handled, nullptr);
    if (ready_ && !options_.initial_program.empty()) {
        if (auto started = spawn_initial_program(); !started) {
            signals_.clear();
            sigaction(SIGPIPE, &old_sigpipe, nullptr);
            return started.error();
        }
    }
    loop_.run();
    signals_.clear();
    sigaction(SIGPIPE, &old_sigpipe, nullptr);
    if (options_.loop_ended)
        options_.loop_ended();
    return exit_code_;
}

void Instance::catch_signals() {
    for (const int signal : kForwardedSignals)
        signals_.add(signal);
    signals_.async_wait([this](const asio::error_code& failure, int signal) {
        if (failure)
            return;
        // With an initial program: its process group gets the signal (a
        // child instance passes on what `gantry alloc` forwards), and the
        // instance ends when the program does. Without: a clean end, and
        // the user signals mean nothing to a daemon.
        if (initial_pid_ > 0) {
            ::kill(-initial_pid_, signal);
        } else if (signal != SIGUSR1 && signal != SIGUSR2) {
            // Before every rank joined, the initial program never ran: the
            // instance ends as that program would have, killed by the signal.
            if (!ready_ && !ending_ && !options_.initial_program.empty()) {
                std::cerr << "gantry: " << interrupted_before_ready(signal) << '\n';
                exit_code_ = 128 + signal;
            }
            end();
        }
        catch_signals();
    });
}

Status Instance::spawn_initial_program() {
    if (options_.prepared_program)
        return start_prepared_program();
    // Everything the child needs is made before fork(): it only calls the
    // system.
    std::vector<char*> argv;
    for (const auto& arg : options_.initial_program)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const std::string variable = std::string(overlay::kUriVariable) + "=";
    const std::string uri_entry = variable + uri();
    std::vector<char*> envp;
    // A job id inherited from an enclosing instance's job means nothing
    // here: the initial program is no job of this instance.
    for (char** entry = environ; *entry; ++entry)
        if (!std::string_view(*entry).starts_with(variable) &&
            !std::string_view(*entry).starts_with("GANTRY_JOB_ID="))
            envp.push_back(*entry);
    envp.push_back(const_cast<char*>(uri_entry.c_str()));
    envp.push_back(nullptr);
    const std::string failure_prefix =
        "gantry: initial program: " + options_.initial_program.front() + ": ";

    auto containment = shell::Containment::start(initial_program_cgroup_name(), true);
    if (!containment)
        return containment.error();
    initial_containment_ = std::move(*containment);

    const pid_t broker = ::getpid();

    foreground_ = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
    // Started in its cgroup where the kernel can (no migration to wait
    // for, shell/clone_into.h); else it moves itself in.
    int cgroup_procs = -1;
    shell::CloneResult started{-1, 0, true};
    if (const int cgroup_dir = initial_containment_->cgroup_dir_fd(); cgroup_dir >= 0)
        started = shell::fork_into_cgroup(cgroup_dir);
    if (started.unsupported) {
        cgroup_procs = initial_containment_->cgroup_procs();
        started.pid = ::fork();
        started.error = errno;
    }
    const pid_t pid = started.pid;
    if (pid < 0)
        return system_error("cannot start the initial program", started.error);
    if (pid == 0) {
        // It dies with the broker, however the broker dies; what it starts
        // stays in its cgroup, for the watcher to end then.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != broker)
            ::_exit(127);
        if (cgroup_procs >= 0 && ::write(cgroup_procs, "0", 1) != 1)
            write_all(STDERR_FILENO, failure_prefix + "cannot join its cgroup\n");
        // Its own process group, which signals to the broker are forwarded
        // to; on a terminal, the foreground one.
        ::setpgid(0, 0);
        if (foreground_)
            give_terminal(::getpid());
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execvpe(argv[0], argv.data(), envp.data());
        const int number = errno;
        write_all(STDERR_FILENO, failure_prefix);
        write_all(STDERR_FILENO, std::strerror(number));
        write_all(STDERR_FILENO, "\n");
        ::_exit(number == ENOENT ? 127 : 126);
    }
    ::setpgid(pid, pid);  // also here, so that a signal forwarded now reaches it
    initial_containment_->add_group(pid);
    return watch_initial_program(pid);
}

Status Instance::watch_initial_program(pid_t pid) {
    initial_pid_ = pid;
    auto exit = ChildExit::watch(loop_, pid, [this](int status) { initial_program_ended(status); });
    if (!exit) {
        ::kill(-pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        initial_pid_ = -1;
        return exit.error();
    }
    initial_exit_.emplace(std::move(*exit));
    return {};
}

// The forked initial program joins the containment (what it starts ends
// with it), gets the terminal as a spawned one would, then its URI.
Status Instance::start_prepared_program() {
    PreparedProgram program = std::move(*options_.prepared_program);
    options_.prepared_program.reset();
    initial_containment_ = program.take_containment();
    const pid_t pid = program.pid();
    foreground_ = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
    if (foreground_)
        give_terminal(pid);
    // Watched first: one that has died already ends the instance with its
    // status, as a spawned one that failed would.
    if (auto watched = watch_initial_program(pid); !watched)
        return watched.error();
    return program.start(uri());
}

void Instance::initial_program_ended(int wait_status) {
    initial_containment_->end();  // what it left running (`cmd &`) ends with it
    exit_code_ = shell::exit_code_of(wait_status);
    initial_pid_ = -1;
    initial_exit_.reset();
    if (foreground_)
        give_terminal(::getpgrp());
    end();
}

void Instance::end() {
    if (ending_)
        return;
    ending_ = true;
    // Running jobs are terminated and recorded before the API goes, and
    // the other brokers before this one.
    const auto close = [this] {
        shut_down_brokers([this] { broker_.close([this] { loop_.stop(); }); });
    };
    if (jobs_)
        jobs_->stop(close);
    else
        close();
}

Result<int> run_instance(InstanceOptions options) {
    auto instance = Instance::open(std::move(options));
    if (!instance)
        return instance.error();
    return (*instance)->run();
}

// --- The daemon --------------------------------------------------------------

namespace {

// In the detached process: opens the instance, tells the caller through
// `ready` (its URI, or "!" and why not), runs it and exits.
[[noreturn]] void run_daemon(InstanceOptions options, int ready) {
    int exit_code = 1;
    {
        auto instance = Instance::open(std::move(options));
        if (!instance) {
            write_all(ready, "!" + instance.error().str());
        } else {
            write_all(ready, (*instance)->uri() + "\n");
            ::close(ready);
            auto ended = (*instance)->run();
            exit_code = ended ? *ended : 1;
        }
    }
    std::exit(exit_code);
}

}  // namespace

Result<std::string> start_daemon(InstanceOptions options) {
    if (options.state_dir) {
        // The daemon works from /.
        std::error_code failure;
        const auto absolute = std::filesystem::absolute(*options.state_dir, failure);
        if (failure)
            return error("state directory " + *options.state_dir + ": " + failure.message());
        options.state_dir = absolute.string();
    }
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0)
        return system_error("cannot start the daemon: pipe", errno);
    const pid_t child = ::fork();
    if (child < 0) {
        const int number = errno;
        ::close(ready[0]);
        ::close(ready[1]);
        return system_error("cannot start the daemon: fork", number);
    }
    if (child == 0) {
        // A new session, then a grandchild that is no process's child here
        // and can never take a controlling terminal.
        ::close(ready[0]);
        ::setsid();
        const pid_t daemon = ::fork();
        if (daemon != 0) {
            if (daemon < 0)
                write_all(ready[1], std::string("!") + "fork: " + std::strerror(errno));
            ::_exit(0);
        }
        // Above 2, whatever the caller had closed, so that stdio can be replaced.
        const int tell = ::fcntl(ready[1], F_DUPFD_CLOEXEC, 3);
        const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (tell < 0 || null < 0 || ::chdir("/") != 0) {
            write_all(ready[1], std::string("!") + "cannot detach: " + std::strerror(errno));
            ::_exit(1);
        }
        ::close(ready[1]);
        for (int fd = 0; fd < 3; ++fd)
            if (fd != null)
                ::dup2(null, fd);
        if (null > 2)
            ::close(null);
        run_daemon(std::move(options), tell);
    }
    ::close(ready[1]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    std::string answer;
    read_all(ready[0], answer);
    ::close(ready[0]);
    if (answer.starts_with("!"))
        return Error("", answer.substr(1));  // the daemon's Error, as one line
    if (answer.empty() || answer.back() != '\n')
        return error("the daemon ended before it was ready");
    answer.pop_back();
    return answer;
}

}  // namespace gantry::broker
