// A machine's topology through hwloc: this machine, an XML file written by
// `lstopo --of xml`, or a synthetic description such as
// "package:2 numa:1 l3:1 core:8 pu:2".
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "util/error.h"

struct hwloc_topology;

namespace gantry {

class Topology {
public:
    static Result<Topology> local();
    static Result<Topology> from_xml(const std::string& path);
    static Result<Topology> from_synthetic(std::string_view description);

    unsigned npackages() const;
    unsigned ncores() const;
    unsigned npus() const;
    // Compute GPUs (CUDA, ROCm or OpenCL co-processors), one per PCI device.
    unsigned ngpus() const;

    // The hwloc handle, for layers that walk the object tree.
    hwloc_topology* handle() const { return topology_.get(); }

private:
    struct Destroy {
        void operator()(hwloc_topology* topology) const;
    };
    explicit Topology(hwloc_topology* topology) : topology_(topology, Destroy{}) {}
    // Shared: a loaded topology is immutable, so copies may share it.
    std::shared_ptr<hwloc_topology> topology_;
};

// This machine's host name (short form, as flux and Slurm print it).
std::string local_hostname();

}  // namespace gantry
