// A machine's topology through hwloc: this machine, an XML file written by
// `lstopo --of xml`, or a synthetic description such as
// "package:2 numa:1 l3:1 core:8 pu:2".
//
// Loading takes a snapshot of what the mapper needs (objects by type with
// their logical and OS indices and cpusets, GPUs with their locality), so no
// other layer ever sees an hwloc type. Cpusets are IdSets of *logical* PU
// indices; `os_pus()` translates them for binding calls.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/idset.h"
#include "util/error.h"

struct hwloc_topology;

namespace gantry {

// The levels the mapper maps and binds to, coarsest first.
enum class ObjectType { kPackage, kNuma, kL3Cache, kL2Cache, kL1Cache, kCore, kPu };
inline constexpr ObjectType kAllObjectTypes[] = {
    ObjectType::kPackage, ObjectType::kNuma, ObjectType::kL3Cache, ObjectType::kL2Cache,
    ObjectType::kL1Cache, ObjectType::kCore, ObjectType::kPu};

// "package", "numa", "l3cache", "l2cache", "l1cache", "core", "hwthread".
std::string_view to_string(ObjectType type);

struct TopoObject {
    ObjectType type;
    unsigned logical;  // index among the objects of its type, in hwloc's logical order
    unsigned os;       // the operating system's index (hwloc's os_index)
    IdSet pus;         // logical PU indices
};

// One GPU, counted as the README of PRRTE's offline suite counts them: a PCI
// function with a compute OS device (co-processor, CUDA, NVML...), or a
// display-class function with a DRM render node.
struct Gpu {
    std::string name;       // the OS device name tasks are told: cuda0, rsmi0, renderD128
    std::string uuid;       // vendor UUID (NVIDIAUUID, AMDUUID); empty when none is known
    std::string pci_busid;  // 0000:06:00.0
    IdSet pus;              // locality: the PUs of the nearest ancestor with CPUs
};

class Topology {
public:
    static Result<Topology> local();
    static Result<Topology> from_xml(const std::string& path);
    // An lstopo XML document held in memory (what to_xml() gives): an
    // instance hands its topology to each job's shell this way, which is
    // several times cheaper than reading the machine again.
    static Result<Topology> from_xml_text(const std::string& xml);
    static Result<Topology> from_synthetic(std::string_view description);
    // An lstopo XML file when `text` names one, else a synthetic description
    // ("package:2 core:8 pu:2"), as `--topology` takes them.
    static Result<Topology> from_file_or_synthetic(const std::string& text);

    unsigned npackages() const { return count(ObjectType::kPackage); }
    unsigned ncores() const { return count(ObjectType::kCore); }
    unsigned npus() const { return count(ObjectType::kPu); }
    unsigned ngpus() const { return static_cast<unsigned>(gpus().size()); }

    unsigned count(ObjectType type) const { return static_cast<unsigned>(objects(type).size()); }
    // All objects of `type`, indexed by logical index.
    std::span<const TopoObject> objects(ObjectType type) const;
    const TopoObject& object(ObjectType type, unsigned logical) const {
        return objects(type)[logical];
    }
    // Logical indices of the objects of `type` whose PUs all lie in `pus`.
    std::vector<unsigned> objects_within(ObjectType type, const IdSet& pus) const;
    // Logical index of the object of `type` that holds PU `pu`, if any.
    std::optional<unsigned> object_of(ObjectType type, unsigned pu) const;

    IdSet all_pus() const;
    // The same PUs named by their OS indices.
    IdSet os_pus(const IdSet& logical_pus) const;

    // The topology as an lstopo XML document.
    std::string to_xml() const;

    // GPUs in PCI order.
    std::span<const Gpu> gpus() const;

    // The hwloc handle, for the layer that binds processes.
    hwloc_topology* handle() const { return topology_.get(); }

private:
    struct Snapshot;
    struct Destroy {
        void operator()(hwloc_topology* topology) const;
    };
    explicit Topology(hwloc_topology* topology);
    // Shared: a loaded topology is immutable, so copies share it and its snapshot.
    std::shared_ptr<hwloc_topology> topology_;
    std::shared_ptr<const Snapshot> snapshot_;
};

// This machine's host name (short form, as flux and Slurm print it).
std::string local_hostname();

// Every name a user may give this machine by: `localhost`, its host name in
// full and short, and the address of each of its network interfaces
// (loopback included).
std::vector<std::string> local_names();

}  // namespace gantry
