#include "topo/topology.h"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace gantry {
namespace {

using Configure = int (*)(hwloc_topology_t, const void*);

// Initializes, applies `configure` and loads; GPUs need I/O objects kept.
Result<hwloc_topology_t> load(std::string_view what, const std::string& source,
                              int (*configure)(hwloc_topology_t, const char*)) {
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0)
        return Error("topology", "cannot initialize hwloc: " + std::string(std::strerror(errno)));
    hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
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

unsigned count_type(hwloc_topology_t topology, hwloc_obj_type_t type) {
    const int n = hwloc_get_nbobjs_by_type(topology, type);
    return n > 0 ? static_cast<unsigned>(n) : 0;
}

}  // namespace

void Topology::Destroy::operator()(hwloc_topology* topology) const {
    hwloc_topology_destroy(topology);
}

Result<Topology> Topology::local() {
    auto loaded = load("this machine", "", nullptr);
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

Result<Topology> Topology::from_xml(const std::string& path) {
    auto loaded = load("XML topology", path, hwloc_topology_set_xml);
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

Result<Topology> Topology::from_synthetic(std::string_view description) {
    auto loaded =
        load("synthetic topology", std::string(description), hwloc_topology_set_synthetic);
    if (!loaded)
        return loaded.error();
    return Topology(*loaded);
}

unsigned Topology::npackages() const {
    return count_type(handle(), HWLOC_OBJ_PACKAGE);
}
unsigned Topology::ncores() const {
    return count_type(handle(), HWLOC_OBJ_CORE);
}
unsigned Topology::npus() const {
    return count_type(handle(), HWLOC_OBJ_PU);
}

unsigned Topology::ngpus() const {
    // One physical GPU shows up as several OS devices (cuda0, opencl0d0,
    // rsmi0...): count the distinct PCI devices that carry a co-processor.
    std::set<hwloc_obj_t> devices;
    for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_osdev(handle(), obj)) != nullptr;) {
        if (obj->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
            continue;
        devices.insert(obj->parent ? obj->parent : obj);
    }
    return static_cast<unsigned>(devices.size());
}

std::string local_hostname() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    std::string host = name;
    return host.substr(0, host.find('.'));
}

}  // namespace gantry
