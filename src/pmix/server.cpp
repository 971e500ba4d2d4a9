// The OpenPMIx server library behind pmix::Job. Its upcalls come on its own
// thread and name a namespace: each is passed to that job's Events, or
// refused when the job has ended.
#include "pmix/server.h"

#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "pmix/library.h"

namespace gantry::pmix {
namespace {

// pmix_info_t values, released with the list. The library copies what it is
// given, so a list only needs to live across the call it is passed to.
class InfoList {
public:
    InfoList() = default;
    InfoList(const InfoList&) = delete;
    InfoList& operator=(const InfoList&) = delete;
    ~InfoList() {
        for (pmix_info_t& info : infos_)
            PMIX_INFO_DESTRUCT(&info);
    }

    void add(const char* key, const void* value, pmix_data_type_t type) {
        pmix_info_t& info = infos_.emplace_back();
        PMIX_INFO_CONSTRUCT(&info);
        PMIX_INFO_LOAD(&info, key, value, type);
    }
    void add_string(const char* key, const std::string& value) {
        add(key, value.c_str(), PMIX_STRING);
    }
    void add_u32(const char* key, std::uint32_t value) { add(key, &value, PMIX_UINT32); }
    void add_u16(const char* key, std::uint16_t value) { add(key, &value, PMIX_UINT16); }
    void add_rank(const char* key, pmix_rank_t value) { add(key, &value, PMIX_PROC_RANK); }
    void add_bool(const char* key, bool value) { add(key, &value, PMIX_BOOL); }
    // `list` as one value: a data array of infos (PMIX_PROC_DATA...).
    void add_list(const char* key, InfoList& list) {
        pmix_data_array_t array;
        array.type = PMIX_INFO;
        array.size = list.size();
        array.array = list.data();
        add(key, &array, PMIX_DATA_ARRAY);
    }

    // The topology of `key` is not the list's to destroy (the library keeps
    // using it): only the copy of its description that the list made is
    // released.
    void forget_topology(const char* key) {
        for (pmix_info_t& info : infos_)
            if (PMIX_CHECK_KEY(&info, key) && info.value.type == PMIX_TOPO) {
                std::free(info.value.data.topo->source);
                std::free(info.value.data.topo);
                info.value.type = PMIX_UNDEF;
            }
    }

    pmix_info_t* data() { return infos_.data(); }
    std::size_t size() const { return infos_.size(); }

private:
    std::vector<pmix_info_t> infos_;
};

std::string status_text(pmix_status_t status) {
    return PMIx_Error_string(status);
}

// The process's server: started once, by the first job.
struct ServerState {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<const Events>, std::less<>> jobs;
    std::string directory;
    hwloc_topology_t topology = nullptr;
    std::optional<Status> started;  // the outcome of the one start
};

// Never destroyed: the library's thread may call in while the process exits.
ServerState& server() {
    static ServerState* const state = new ServerState;
    return *state;
}

std::shared_ptr<const Events> events_of(const char* nspace) {
    ServerState& state = server();
    const std::lock_guard lock(state.mutex);
    const auto found = state.jobs.find(std::string_view(nspace));
    return found == state.jobs.end() ? nullptr : found->second;
}

pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
    const auto events = events_of(proc->nspace);
    if (!events)
        return PMIX_ERR_NOT_FOUND;
    if (events->connected)
        events->connected(proc->rank);
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
    // Before the task hears back, so before it can exit: its end is seen
    // after its finalize.
    if (const auto events = events_of(proc->nspace); events && events->finalized)
        events->finalized(proc->rank);
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char message[],
                       pmix_proc_t[], std::size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
    if (const auto events = events_of(proc->nspace); events && events->abort)
        events->abort(proc->rank, status, message ? message : "");
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

void release_data(void* data) {
    std::free(data);
}

// Answers a fence or a direct modex with `data`, or with `failure`.
void give_data(pmix_modex_cbfunc_t cbfunc, void* cbdata, const std::optional<std::string>& data,
               pmix_status_t failure) {
    if (!data) {
        cbfunc(failure, nullptr, 0, cbdata, nullptr, nullptr);
        return;
    }
    // The library frees it with release_data once used.
    char* const copy = static_cast<char*>(std::malloc(data->size() + 1));
    std::memcpy(copy, data->data(), data->size());
    cbfunc(PMIX_SUCCESS, copy, data->size(), cbdata, release_data, copy);
}

// Fences of the whole job only (every rank of one namespace): that is what
// MPI_Init, MPI_Barrier's PMIx fallbacks and MPI_Finalize ask for. Every
// fence carries its data, whether the tasks asked to collect it or not, so
// that a get of another node's key after a fence is answered locally.
pmix_status_t on_fence(const pmix_proc_t procs[], std::size_t nprocs, const pmix_info_t[],
                       std::size_t, char* data, std::size_t ndata, pmix_modex_cbfunc_t cbfunc,
                       void* cbdata) {
    if (nprocs == 0)
        return PMIX_ERR_BAD_PARAM;
    for (std::size_t i = 0; i < nprocs; ++i)
        if (procs[i].rank != PMIX_RANK_WILDCARD ||
            std::strncmp(procs[i].nspace, procs[0].nspace, PMIX_MAX_NSLEN) != 0)
            return PMIX_ERR_NOT_SUPPORTED;
    const auto events = events_of(procs[0].nspace);
    if (!events || !events->fence)
        return PMIX_ERR_NOT_FOUND;
    events->fence(std::string(data ? data : "", ndata),
                  [cbfunc, cbdata](std::optional<std::string> all) {
                      give_data(cbfunc, cbdata, all, PMIX_ERROR);
                  });
    return PMIX_SUCCESS;
}

// A get of a key another node's task put and no fence has carried yet: the
// shell asks that node's shell (Job::serve_modex there) through the
// instance. The task gets an error when there is no such node, never a
// wait without an end.
pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t info[], std::size_t ninfo,
                              pmix_modex_cbfunc_t cbfunc, void* cbdata) {
    const auto events = events_of(proc->nspace);
    if (!events)
        return PMIX_ERR_NOT_FOUND;
    if (!events->direct_modex || proc->rank == PMIX_RANK_WILDCARD)
        return PMIX_ERR_NOT_SUPPORTED;
    // The key the task's get is for: the data must hold it, not merely be
    // what the task committed so far (PMIx_Init commits some of its own).
    std::string key;
    for (std::size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_REQUIRED_KEY) && info[i].value.type == PMIX_STRING &&
            info[i].value.data.string)
            key = info[i].value.data.string;
    events->direct_modex(proc->rank, key, [cbfunc, cbdata](std::optional<std::string> data) {
        give_data(cbfunc, cbdata, data, PMIX_ERR_NOT_FOUND);
    });
    return PMIX_SUCCESS;
}

// What PMIx_server_dmodex_request gives back, for Job::serve_modex.
void on_modex_served(pmix_status_t status, char* data, std::size_t size, void* cbdata) {
    std::unique_ptr<Events::ModexDone> done(static_cast<Events::ModexDone*>(cbdata));
    if (status == PMIX_SUCCESS)
        (*done)(std::string(data ? data : "", size));
    else
        (*done)(std::nullopt);
}

void stop_server() {
    ServerState& state = server();
    PMIx_server_finalize();
    std::error_code ignored;
    std::filesystem::remove_all(state.directory, ignored);
}

// A directory of this user's alone. One left by a process of the same pid
// that was killed is removed first.
Status make_private_directory(const std::string& path) {
    if (::mkdir(path.c_str(), 0700) == 0)
        return {};
    if (errno == EEXIST) {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
        if (::mkdir(path.c_str(), 0700) == 0)
            return {};
    }
    return Error("pmix", "cannot make a directory " + path + ": " + std::strerror(errno));
}

// The directories of this user's servers whose process has died without
// removing its own (killed before its watcher or broker could, or a path
// not found yet): removed by the next server that starts here.
void remove_stale_directories(const std::string& own) {
    const std::filesystem::path base = std::filesystem::path(own).parent_path();
    std::error_code error;
    for (std::filesystem::directory_iterator entry(base, error), end; !error && entry != end;
         entry.increment(error)) {
        const std::string name = entry->path().filename().string();
        constexpr std::string_view kPrefix = "gantry-pmix-";
        if (!name.starts_with(kPrefix))
            continue;
        const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + kPrefix.size()));
        struct stat status {};
        if (pid <= 0 || ::lstat(entry->path().c_str(), &status) != 0 ||
            status.st_uid != ::getuid() || !S_ISDIR(status.st_mode))
            continue;
        if (::kill(pid, 0) != 0 && errno == ESRCH) {
            std::error_code ignored;
            std::filesystem::remove_all(entry->path(), ignored);
        }
    }
}

Status start_server(ServerState& state, const std::string& hostname, std::uint32_t node) {
    if (auto library = load_library(); !library)
        return library.error();
    state.directory = server_directory_of(::getpid());
    remove_stale_directories(state.directory);
    if (auto made = make_private_directory(state.directory); !made)
        return made.error();
    // The library would load the topology itself, three times slower.
    if (hwloc_topology_init(&state.topology) != 0 || hwloc_topology_load(state.topology) != 0)
        return Error("pmix", "cannot load this machine's topology");

    static pmix_server_module_t module{};
    module.client_connected = on_connected;
    module.client_finalized = on_finalized;
    module.abort = on_abort;
    module.fence_nb = on_fence;
    module.direct_modex = on_direct_modex;
    pmix_topology_t topology;
    topology.source = const_cast<char*>("hwloc");
    topology.topology = state.topology;
    InfoList infos;
    infos.add_string(PMIX_SERVER_TMPDIR, state.directory);
    infos.add_string(PMIX_SYSTEM_TMPDIR, state.directory);
    infos.add_string(PMIX_HOSTNAME, hostname);
    infos.add_rank(PMIX_SERVER_RANK, node);
    infos.add_bool(PMIX_SERVER_TOOL_SUPPORT, false);
    infos.add(PMIX_TOPOLOGY2, &topology, PMIX_TOPO);
    const pmix_status_t status = PMIx_server_init(&module, infos.data(), infos.size());
    infos.forget_topology(PMIX_TOPOLOGY2);
    if (status != PMIX_SUCCESS) {
        std::error_code ignored;
        std::filesystem::remove_all(state.directory, ignored);
        return Error("pmix", "the PMIx server did not start: " + status_text(status));
    }
    std::atexit(stop_server);
    // Makes the topology given at init the one the library computes
    // locality strings with (it is not, until asked for).
    pmix_topology_t loaded;
    PMIX_TOPOLOGY_CONSTRUCT(&loaded);
    if (const pmix_status_t status = PMIx_Load_topology(&loaded); status != PMIX_SUCCESS)
        return Error("pmix", "the PMIx server has no topology: " + status_text(status));
    return {};
}

// "0,1;2,3": the ranks of each node, in node order, as PMIx_generate_ppn
// takes them (it reads "0-1" as one rank).
std::string ranks_by_node(const JobInfo& info) {
    std::vector<IdSet> ranks(info.node_names.size());
    for (std::uint32_t rank = 0; rank < info.node_of_rank.size(); ++rank)
        ranks.at(info.node_of_rank[rank]).insert(rank);
    std::string text;
    for (const IdSet& set : ranks) {
        if (!text.empty())
            text += ';';
        text += set.encode({.ranges = false});
    }
    return text;
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) {
        if (!text.empty())
            text += ',';
        text += name;
    }
    return text;
}

// What PMIx_generate_regex and PMIx_generate_ppn make of a list: compact
// forms that every client of this library reads.
Result<std::string> generated(pmix_status_t (*generate)(const char*, char**),
                              const std::string& input) {
    char* output = nullptr;
    if (const pmix_status_t status = generate(input.c_str(), &output); status != PMIX_SUCCESS)
        return Error("pmix", "cannot encode the job's node map: " + status_text(status));
    std::string text(output);
    std::free(output);
    return text;
}

// The locality string of a task bound to `cpus` (OS indices; empty: the
// whole machine): how near two tasks of a node are, for Open MPI's choice
// of transports and collectives.
std::optional<std::string> locality_of(hwloc_topology_t topology, const IdSet& cpus) {
    hwloc_bitmap_t bitmap = hwloc_bitmap_alloc();
    if (cpus.empty())
        hwloc_bitmap_copy(bitmap, hwloc_topology_get_allowed_cpuset(topology));
    else
        for (const unsigned cpu : cpus)
            hwloc_bitmap_set(bitmap, cpu);
    pmix_cpuset_t cpuset;
    cpuset.source = const_cast<char*>("hwloc");
    cpuset.bitmap = bitmap;
    char* locality = nullptr;
    const pmix_status_t status = PMIx_server_generate_locality_string(&cpuset, &locality);
    hwloc_bitmap_free(bitmap);
    if (status != PMIX_SUCCESS || !locality)
        return std::nullopt;
    std::string text(locality);
    std::free(locality);
    return text;
}

// The namespace's information: job-level, this node's, each app's and each
// process's (PMIx standard v4, "Reserved keys").
Status describe_job(const JobInfo& info, const std::string& directory, hwloc_topology_t topology,
                    InfoList& out) {
    const auto size = static_cast<std::uint32_t>(info.app_of_rank.size());
    std::uint32_t apps = 0;
    for (const std::uint32_t app : info.app_of_rank)
        apps = std::max(apps, app + 1);
    std::vector<std::uint32_t> app_size(apps, 0);
    std::vector<std::uint32_t> app_leader(apps, 0);
    for (std::uint32_t rank = size; rank-- > 0;) {
        ++app_size[info.app_of_rank[rank]];
        app_leader[info.app_of_rank[rank]] = rank;
    }
    IdSet local;
    for (std::uint32_t rank = 0; rank < size; ++rank)
        if (info.node_of_rank[rank] == info.node)
            local.insert(rank);

    auto node_map = generated(PMIx_generate_regex, joined(info.node_names));
    if (!node_map)
        return node_map.error();
    auto proc_map = generated(PMIx_generate_ppn, ranks_by_node(info));
    if (!proc_map)
        return proc_map.error();

    out.add_string(PMIX_JOBID, info.nspace);
    out.add_u32(PMIX_JOB_SIZE, size);
    out.add_u32(PMIX_UNIV_SIZE, std::max(info.universe_size, size));
    out.add_u32(PMIX_MAX_PROCS, std::max(info.universe_size, size));
    out.add_u32(PMIX_JOB_NUM_APPS, apps);
    out.add_u32(PMIX_NUM_NODES, static_cast<std::uint32_t>(info.node_names.size()));
    out.add_string(PMIX_NODE_MAP, *node_map);
    out.add_string(PMIX_PROC_MAP, *proc_map);
    out.add_string(PMIX_TMPDIR, directory);
    out.add_string(PMIX_NSDIR, directory);
    out.add_bool(PMIX_TDIR_RMCLEAN, true);
    // This node.
    // A plain list: clients split it on commas.
    out.add_string(PMIX_LOCAL_PEERS, local.encode({.ranges = false}));
    out.add_u32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local.count()));
    out.add_u32(PMIX_NODE_SIZE, static_cast<std::uint32_t>(local.count()));
    if (!local.empty())
        out.add_rank(PMIX_LOCALLDR, *local.first());
    // Each app.
    for (std::uint32_t app = 0; app < apps; ++app) {
        InfoList entry;
        entry.add_u32(PMIX_APPNUM, app);
        entry.add_u32(PMIX_APP_SIZE, app_size[app]);
        entry.add_rank(PMIX_APPLDR, app_leader[app]);
        out.add_list(PMIX_APP_INFO_ARRAY, entry);
    }
    // Each process: ranks on a node are numbered in rank order.
    std::vector<std::uint16_t> next_local_rank(info.node_names.size(), 0);
    for (std::uint32_t rank = 0; rank < size; ++rank) {
        const std::uint32_t node = info.node_of_rank[rank];
        const std::uint16_t local_rank = next_local_rank[node]++;
        InfoList entry;
        entry.add_rank(PMIX_RANK, rank);
        entry.add_u32(PMIX_APPNUM, info.app_of_rank[rank]);
        entry.add_u32(PMIX_APP_RANK, rank - app_leader[info.app_of_rank[rank]]);
        entry.add_rank(PMIX_GLOBAL_RANK, rank);
        entry.add_u32(PMIX_NODEID, node);
        entry.add_u16(PMIX_LOCAL_RANK, local_rank);
        entry.add_u16(PMIX_NODE_RANK, local_rank);
        entry.add_string(PMIX_HOSTNAME, info.node_names[node]);
        if (node == info.node) {
            const auto bound = info.bindings.find(rank);
            if (const auto locality =
                    locality_of(topology, bound == info.bindings.end() ? IdSet() : bound->second))
                entry.add_string(PMIX_LOCALITY_STRING, *locality);
        }
        out.add_list(PMIX_PROC_DATA, entry);
    }
    return {};
}

Status check(const JobInfo& info) {
    if (info.nspace.empty() || info.nspace.size() > PMIX_MAX_NSLEN)
        return Error("pmix", "a namespace of 1 to " + std::to_string(PMIX_MAX_NSLEN) +
                                 " bytes is needed, not '" + info.nspace + "'");
    if (info.node_of_rank.size() != info.app_of_rank.size())
        return Error("pmix", "the job's ranks have " + std::to_string(info.app_of_rank.size()) +
                                 " apps but " + std::to_string(info.node_of_rank.size()) +
                                 " nodes");
    if (info.node >= info.node_names.size())
        return Error("pmix", "node " + std::to_string(info.node) + " is not one of the job's " +
                                 std::to_string(info.node_names.size()));
    for (const std::uint32_t node : info.node_of_rank)
        if (node >= info.node_names.size())
            return Error("pmix", "a rank is on node " + std::to_string(node) +
                                     ", not one of the job's " +
                                     std::to_string(info.node_names.size()));
    return {};
}

}  // namespace

Result<std::unique_ptr<Job>> Job::start(const JobInfo& info, Events events) {
    if (auto checked = check(info); !checked)
        return checked.error();
    ServerState& state = server();
    {
        const std::lock_guard lock(state.mutex);
        if (!state.started)
            state.started = start_server(state, info.node_names[info.node], info.node);
        if (!*state.started)
            return state.started->error();
        if (state.jobs.contains(info.nspace))
            return Error("pmix", "namespace " + info.nspace + " is already registered");
    }
    std::string directory = state.directory + "/" + info.nspace;
    std::error_code error;
    std::filesystem::create_directory(directory, error);
    if (error)
        return Error("pmix", "cannot make " + directory + ": " + error.message());
    std::unique_ptr<Job> job(new Job(info.nspace, directory));

    InfoList described;
    if (auto status = describe_job(info, directory, state.topology, described); !status)
        return status.error();
    {
        const std::lock_guard lock(state.mutex);
        state.jobs.emplace(info.nspace, std::make_shared<const Events>(std::move(events)));
    }
    std::uint32_t local = 0;
    for (const std::uint32_t node : info.node_of_rank)
        local += node == info.node ? 1 : 0;
    const pmix_status_t status =
        PMIx_server_register_nspace(info.nspace.c_str(), static_cast<int>(local), described.data(),
                                    described.size(), nullptr, nullptr);
    if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
        return Error("pmix", "cannot register the job's namespace: " + status_text(status));
    return job;
}

Job::~Job() {
    ServerState& state = server();
    {
        const std::lock_guard lock(state.mutex);
        state.jobs.erase(nspace_);
    }
    PMIx_server_deregister_nspace(nspace_.c_str(), nullptr, nullptr);
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
}

Result<std::vector<std::string>> Job::task_environment(std::uint32_t rank) const {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace_.c_str(), rank);
    char** env = nullptr;
    if (const pmix_status_t status = PMIx_server_setup_fork(&proc, &env); status != PMIX_SUCCESS)
        return Error(
            "pmix", "no environment for rank " + std::to_string(rank) + ": " + status_text(status));
    std::vector<std::string> variables;
    for (char** entry = env; entry && *entry; ++entry) {
        variables.emplace_back(*entry);
        std::free(*entry);
    }
    std::free(static_cast<void*>(env));
    // Open MPI 4.1 takes a process that no launcher it knows started for a
    // singleton, PMIx or not: these make it use the PMIx server.
    variables.emplace_back("OMPI_MCA_ess=^singleton");
    variables.emplace_back("OMPI_MCA_schizo=^orte");
    const pmix_status_t status =
        PMIx_server_register_client(&proc, ::getuid(), ::getgid(), nullptr, nullptr, nullptr);
    if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
        return Error("pmix",
                     "cannot register rank " + std::to_string(rank) + ": " + status_text(status));
    return variables;
}

void Job::serve_modex(std::uint32_t rank, Events::ModexDone done) const {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace_.c_str(), rank);
    auto owned = std::make_unique<Events::ModexDone>(std::move(done));
    // The library answers once the task has committed its data, on its own
    // thread; when it refuses at once, it never calls back.
    if (PMIx_server_dmodex_request(&proc, on_modex_served, owned.get()) == PMIX_SUCCESS) {
        (void)owned.release();
        return;
    }
    (*owned)(std::nullopt);
}

bool Job::has_key(std::uint32_t rank, const std::string& key) const {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace_.c_str(), rank);
    // Only what the server holds: never a request of its own.
    InfoList infos;
    infos.add_bool(PMIX_OPTIONAL, true);
    pmix_value_t* value = nullptr;
    const pmix_status_t status = PMIx_Get(&proc, key.c_str(), infos.data(), infos.size(), &value);
    if (value)
        PMIX_VALUE_RELEASE(value);
    return status == PMIX_SUCCESS;
}

std::string server_directory_of(pid_t pid) {
    const char* const base = std::getenv("TMPDIR");
    return std::string(base && *base ? base : "/tmp") + "/gantry-pmix-" + std::to_string(pid);
}

}  // namespace gantry::pmix

#if defined(__SANITIZE_ADDRESS__)
// In a sanitized build, LeakSanitizer's own list for every process that
// serves PMIx, wherever it runs (a broker started over ssh gets no
// LSAN_OPTIONS): the server library and libevent under it keep state for
// the life of the process that PMIx_server_finalize does not free.
extern "C" const char* __lsan_default_suppressions() {
    return "leak:libpmix.so\nleak:libevent_core\n";
}
// Without the table of what they suppressed on stderr, which is the job's.
extern "C" const char* __lsan_default_options() {
    return "print_suppressions=0";
}
#endif
