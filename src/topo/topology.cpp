#include "topo/topology.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hwloc.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>

namespace gantry {
namespace {

// GPUs are found among PCI devices, whose discovery reads every device's
// configuration space: most of the time of loading a topology in a virtual
// machine. On Linux a GPU a task can use has a DRM render node or a vendor
// device file, so without any the PCI tree is not read.
bool may_have_gpus() {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/class/drm", error))
        if (entry.path().filename().string().starts_with("renderD"))
            return true;
    return std::filesystem::exists("/dev/nvidia0", error) ||
           std::filesystem::exists("/dev/kfd", error);
}

// hwloc dlopens every plugin it finds when its first topology is created.
// Some cost a launcher dearly and give it nothing: gl connects to X
// displays, opencl starts the GPU drivers' runtimes, xml_libxml maps ICU
// (the built-in XML reader reads lstopo's files), and pci is useless where
// there is no GPU. Unless the user chose otherwise, they are left out while
// one topology, kept for the life of the process, holds hwloc's plugin
// list, so that the variable never reaches the tasks.
void load_plugins_once() {
    static const bool loaded = [] {
        constexpr const char* kVariable = "HWLOC_PLUGINS_BLACKLIST";
        const bool ours = std::getenv(kVariable) == nullptr;
        if (ours)
            setenv(kVariable,
                   may_have_gpus() ? "hwloc_gl,hwloc_opencl,hwloc_xml_libxml"
                                   : "hwloc_gl,hwloc_opencl,hwloc_xml_libxml,hwloc_pci",
                   0);
        static hwloc_topology_t holder = nullptr;
        hwloc_topology_init(&holder);
        if (ours)
            unsetenv(kVariable);
        return true;
    }();
    (void)loaded;
}

// Which of hwloc's discovery components a load of this machine uses.
enum class Discovery {
    kAll,
    // Without the x86 component, which runs CPUID on every processor in
    // turn (migrating the thread to each) to add what the Linux component
    // reads from sysfs already: Topology::local() takes 0.7 ms instead of
    // 1.1 on a 2-core virtual machine (bench/topo_bench, docs/benchmarks.md,
    // 2026-11-27), at each broker's start and each `gantry run`.
    kWithoutX86,
};

// Initializes, applies `configure` and loads; GPUs need I/O objects kept.
Result<hwloc_topology_t> load(std::string_view what, const std::string& source,
                              int (*configure)(hwloc_topology_t, const char*),
                              Discovery discovery = Discovery::kAll) {
    load_plugins_once();
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0)
        return Error("topology", "cannot initialize hwloc: " + std::string(std::strerror(errno)));
    if (discovery == Discovery::kWithoutX86)
        hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    const bool io = configure != nullptr || may_have_gpus();
    hwloc_topology_set_io_types_filter(
        topology, io ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT : HWLOC_TYPE_FILTER_KEEP_NONE);
    if (configure && configure(topology, source.c_str()) != 0) {
        const int saved = errno;
        hwloc_topology_destroy(topology);
        return Error::in("topology",
                         "cannot read " + std::string(what) + ": " + std::strerror(saved), source);
    }
    if (hwloc_topology_load(topology) != 0) {
        const int saved = errno;
        hwloc_topology_destroy(topology);
        return Error::in("topology",
                         "cannot load " + std::string(what) + ": " + std::strerror(saved), source);
    }
    return topology;
}

// A process confined to some CPUs (a job of an instance, taskset, a cgroup)
// sees only those, numbered among themselves: a nested instance's R counts
// its cores from 0 (RFC 20 remapping), and so does its topology.
void restrict_to_binding(hwloc_topology_t topology) {
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (bound && hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(bound) &&
        !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topology), bound))
        hwloc_topology_restrict(topology, bound, 0);
    hwloc_bitmap_free(bound);
}

unsigned count_type(hwloc_topology_t topology, hwloc_obj_type_t type) {
    const int n = hwloc_get_nbobjs_by_type(topology, type);
    return n > 0 ? static_cast<unsigned>(n) : 0;
}

hwloc_obj_type_t hwloc_type(ObjectType type) {
    switch (type) {
        case ObjectType::kPackage:
            return HWLOC_OBJ_PACKAGE;
        case ObjectType::kNuma:
            return HWLOC_OBJ_NUMANODE;
        case ObjectType::kL3Cache:
            return HWLOC_OBJ_L3CACHE;
        case ObjectType::kL2Cache:
            return HWLOC_OBJ_L2CACHE;
        case ObjectType::kL1Cache:
            return HWLOC_OBJ_L1CACHE;
        case ObjectType::kCore:
            return HWLOC_OBJ_CORE;
        case ObjectType::kPu:
            return HWLOC_OBJ_PU;
    }
    return HWLOC_OBJ_PU;
}

std::size_t slot_of(ObjectType type) {
    return static_cast<std::size_t>(type);
}

// hwloc cpusets hold OS PU indices; the mapper works in logical ones.
IdSet logical_pus(hwloc_topology_t topology, hwloc_const_cpuset_t cpuset) {
    IdSet pus;
    if (cpuset == nullptr)
        return pus;
    unsigned os = 0;
    hwloc_bitmap_foreach_begin(os, cpuset) {
        const hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topology, os);
        if (pu != nullptr)
            pus.insert(pu->logical_index);
    }
    hwloc_bitmap_foreach_end();
    return pus;
}

bool is_display_class(hwloc_obj_t pcidev) {
    return (pcidev->attr->pcidev.class_id >> 8) == 0x03;
}

bool is_compute_device(hwloc_obj_t osdev) {
    if (osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
        return true;
    const char* backend = hwloc_obj_get_info_by_name(osdev, "Backend");
    return backend != nullptr &&
           (std::strcmp(backend, "CUDA") == 0 || std::strcmp(backend, "NVML") == 0 ||
            std::strcmp(backend, "RSMI") == 0 || std::strcmp(backend, "LevelZero") == 0);
}

bool starts_with(const char* text, std::string_view prefix) {
    return text != nullptr && std::string_view(text).substr(0, prefix.size()) == prefix;
}

// The name a task is told: a co-processor's (cuda0) before a management
// device's (nvml0, rsmi0), before the DRM render node's.
std::string gpu_name(const std::vector<hwloc_obj_t>& osdevs) {
    for (const hwloc_obj_t osdev : osdevs)
        if (osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC && osdev->name)
            return osdev->name;
    for (const hwloc_obj_t osdev : osdevs)
        if (is_compute_device(osdev) && osdev->name)
            return osdev->name;
    for (const hwloc_obj_t osdev : osdevs)
        if (starts_with(osdev->name, "renderD"))
            return osdev->name;
    return osdevs.empty() || !osdevs.front()->name ? "" : osdevs.front()->name;
}

std::string gpu_uuid(const std::vector<hwloc_obj_t>& osdevs) {
    for (const hwloc_obj_t osdev : osdevs)
        for (const char* key : {"NVIDIAUUID", "AMDUUID", "LevelZeroUUID"})
            if (const char* uuid = hwloc_obj_get_info_by_name(osdev, key))
                return uuid;
    return "";
}

std::optional<Gpu> gpu_of(hwloc_topology_t topology, hwloc_obj_t pcidev) {
    std::vector<hwloc_obj_t> osdevs;
    bool compute = false;
    bool render = false;
    for (hwloc_obj_t child = pcidev->io_first_child; child; child = child->next_sibling) {
        if (child->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        osdevs.push_back(child);
        compute = compute || is_compute_device(child);
        render = render || starts_with(child->name, "renderD");
    }
    if (!compute && !(render && is_display_class(pcidev)))
        return std::nullopt;
    char busid[32];
    std::snprintf(busid, sizeof busid, "%04x:%02x:%02x.%01x", pcidev->attr->pcidev.domain,
                  pcidev->attr->pcidev.bus, pcidev->attr->pcidev.dev, pcidev->attr->pcidev.func);
    const hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, pcidev);
    return Gpu{gpu_name(osdevs), gpu_uuid(osdevs), busid,
               logical_pus(topology, ancestor ? ancestor->cpuset : nullptr)};
}

// Whether hwloc found any cache of the machine.
bool has_caches(hwloc_topology_t topology) {
    for (const hwloc_obj_type_t type : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE})
        if (hwloc_get_nbobjs_by_type(topology, type) > 0)
            return true;
    return false;
}

}  // namespace

std::string_view to_string(ObjectType type) {
    switch (type) {
        case ObjectType::kPackage:
            return "package";
        case ObjectType::kNuma:
            return "numa";
        case ObjectType::kL3Cache:
            return "l3cache";
        case ObjectType::kL2Cache:
            return "l2cache";
        case ObjectType::kL1Cache:
            return "l1cache";
        case ObjectType::kCore:
            return "core";
        case ObjectType::kPu:
            return "hwthread";
    }
    return "?";
}

// What the mapper reads, taken once at load time.
struct Topology::Snapshot {
    std::vector<TopoObject> objects[std::size(kAllObjectTypes)];
    // owner[type][pu]: logical index of the object of `type` holding `pu`, or -1.
    std::vector<int> owner[std::size(kAllObjectTypes)];
    std::vector<unsigned> pu_os;  // by logical PU index
    std::vector<Gpu> gpus;
};

void Topology::Destroy::operator()(hwloc_topology* topology) const {
    hwloc_topology_destroy(topology);
}

Topology::Topology(hwloc_topology* topology) : topology_(topology, Destroy{}) {
    auto snapshot = std::make_shared<Snapshot>();
    const unsigned npu = count_type(topology, HWLOC_OBJ_PU);
    snapshot->pu_os.resize(npu);
    for (unsigned i = 0; i < npu; ++i)
        snapshot->pu_os[i] = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, i)->os_index;
    for (const ObjectType type : kAllObjectTypes) {
        auto& objects = snapshot->objects[slot_of(type)];
        auto& owner = snapshot->owner[slot_of(type)];
        owner.assign(npu, -1);
        const unsigned n = count_type(topology, hwloc_type(type));
        for (unsigned i = 0; i < n; ++i) {
            const hwloc_obj_t obj = hwloc_get_obj_by_type(topology, hwloc_type(type), i);
            TopoObject object{type, i, obj->os_index, logical_pus(topology, obj->cpuset)};
            for (const IdSet::Id pu : object.pus)
                if (pu < npu && owner[pu] < 0)
                    owner[pu] = static_cast<int>(i);
            objects.push_back(std::move(object));
        }
    }
    for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_pcidev(topology, obj)) != nullptr;)
        if (auto gpu = gpu_of(topology, obj))
            snapshot->gpus.push_back(std::move(*gpu));
    snapshot_ = std::move(snapshot);
}

Result<Topology> Topology::local() {
    // The caches come from sysfs on Linux; where it does not list them (some
    // virtual machines and containers), CPUID does: the x86 component then.
    auto loaded = load("this machine", "", nullptr, Discovery::kWithoutX86);
    if (loaded && !has_caches(*loaded)) {
        hwloc_topology_destroy(*loaded);
        loaded = load("this machine", "", nullptr);
    }
    if (!loaded)
        return loaded.error();
    restrict_to_binding(*loaded);
    return Topology(*loaded);
}

Result<Topology> Topology::from_xml_text(const std::string& xml) {
    auto loaded = load("XML topology", xml, [](hwloc_topology_t topology, const char* text) {
        // hwloc counts the terminating NUL in the size.
        return hwloc_topology_set_xmlbuffer(topology, text,
                                            static_cast<int>(std::strlen(text) + 1));
    });
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

std::string Topology::to_xml() const {
    char* buffer = nullptr;
    int length = 0;
    if (hwloc_topology_export_xmlbuffer(topology_.get(), &buffer, &length, 0) != 0 || !buffer)
        return {};
    std::string xml(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
    hwloc_free_xmlbuffer(topology_.get(), buffer);
    return xml;
}

namespace {

// hwloc 2.9 (Debian 12) crashes on some malformed XML, such as an object
// without its complete_cpuset (fixed upstream: open-mpi/hwloc#783). A file a
// user names is therefore read first in a child process, which says on a
// pipe that hwloc returned: a file that ends the child is an error, not the
// end of this process. (What a broker sends is hwloc's own export.) The
// child calls hwloc, which allocates: not to be called while another thread
// runs, whose lock held at the fork the child would wait on for ever.
Status survives_loading(const std::string& path) {
    load_plugins_once();  // the child reads with this process's readers
    int done[2];
    if (::pipe2(done, O_CLOEXEC) != 0)
        return {};  // cannot check: read as it is
    const pid_t pid = ::fork();
    if (pid == 0) {
        // A sanitizer's report of the crash is no business of the user's.
        if (const int null = ::open("/dev/null", O_WRONLY); null >= 0)
            ::dup2(null, STDERR_FILENO);
        hwloc_topology_t topology = nullptr;
        if (hwloc_topology_init(&topology) == 0) {
            hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
            if (hwloc_topology_set_xml(topology, path.c_str()) == 0)
                (void)hwloc_topology_load(topology);
        }
        const char returned = 1;
        (void)!::write(done[1], &returned, 1);
        ::_exit(0);
    }
    ::close(done[1]);
    char returned = 0;
    ssize_t n = 0;
    if (pid > 0)
        while ((n = ::read(done[0], &returned, 1)) < 0 && errno == EINTR) {
        }
    ::close(done[0]);
    if (pid < 0)
        return {};
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (n == 1)
        return {};
    return Error::in("topology",
                     "cannot load XML topology: hwloc's reader ended on " +
                         (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                              : "exit " + std::to_string(WEXITSTATUS(status))) +
                         " (is it lstopo's output, unchanged?)",
                     path);
}

}  // namespace

Result<Topology> Topology::from_xml(const std::string& path) {
    if (auto safe = survives_loading(path); !safe)
        return safe.error();
    auto loaded = load("XML topology", path, hwloc_topology_set_xml);
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

Result<Topology> Topology::from_file_or_synthetic(const std::string& text) {
    if (std::filesystem::exists(text))
        return from_xml(text);
    return from_synthetic(text);
}

Result<Topology> Topology::from_synthetic(std::string_view description) {
    auto loaded =
        load("synthetic topology", std::string(description), hwloc_topology_set_synthetic);
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

std::span<const TopoObject> Topology::objects(ObjectType type) const {
    return snapshot_->objects[slot_of(type)];
}

std::vector<unsigned> Topology::objects_within(ObjectType type, const IdSet& pus) const {
    std::vector<unsigned> inside;
    for (const TopoObject& object : objects(type))
        if (!object.pus.empty() && pus.contains(object.pus))
            inside.push_back(object.logical);
    return inside;
}

std::optional<unsigned> Topology::object_of(ObjectType type, unsigned pu) const {
    const auto& owner = snapshot_->owner[slot_of(type)];
    if (pu >= owner.size() || owner[pu] < 0)
        return std::nullopt;
    return static_cast<unsigned>(owner[pu]);
}

IdSet Topology::all_pus() const {
    return npus() == 0 ? IdSet{} : IdSet::range(0, npus() - 1);
}

IdSet Topology::os_pus(const IdSet& logical_pus) const {
    // OS numbers often run in the same order: insert them as runs.
    IdSet os;
    std::optional<IdSet::Range> run;
    for (const IdSet::Id pu : logical_pus) {
        if (pu >= snapshot_->pu_os.size())
            break;
        const IdSet::Id id = snapshot_->pu_os[pu];
        if (run && id == run->hi + 1) {
            run->hi = id;
            continue;
        }
        if (run)
            os.insert(run->lo, run->hi);
        run = IdSet::Range{id, id};
    }
    if (run)
        os.insert(run->lo, run->hi);
    return os;
}

std::span<const Gpu> Topology::gpus() const {
    return snapshot_->gpus;
}

std::string local_hostname() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    std::string host = name;
    return host.substr(0, host.find('.'));
}

std::vector<std::string> local_names() {
    std::vector<std::string> names{"localhost", "localhost.localdomain", local_hostname()};
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0)
        names.emplace_back(name);
    ifaddrs* interfaces = nullptr;
    if (getifaddrs(&interfaces) != 0)
        return names;
    for (const ifaddrs* entry = interfaces; entry; entry = entry->ifa_next) {
        if (!entry->ifa_addr)
            continue;
        const int family = entry->ifa_addr->sa_family;
        char address[INET6_ADDRSTRLEN] = {};
        const void* raw =
            family == AF_INET
                ? static_cast<const void*>(
                      &reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr)
            : family == AF_INET6
                ? static_cast<const void*>(
                      &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr)
                : nullptr;
        if (raw && inet_ntop(family, raw, address, sizeof address))
            names.emplace_back(address);
    }
    freeifaddrs(interfaces);
    return names;
}

}  // namespace gantry
