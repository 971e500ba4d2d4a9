// From a jobspec to its JobMap: the topology it names, the node pool (an
// instance's allocation, the jobspec's R, its -H or hostfile, or this
// machine), each app's hosts and policies. `gantry run` maps its command
// line through here, and an instance's broker a stored jobspec inside the
// R it allocated, so that both give the same map (docs/jobspec.md).
//
// Messages are those of `gantry run`'s options (domain "run", or the
// policies' own "map-by", "hosts", "map"...), since the jobspec's strings
// are those options' values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/jobspec.h"
#include "formats/rset.h"
#include "mapper/display.h"
#include "mapper/map.h"
#include "topo/topology.h"
#include "util/error.h"

namespace gantry {

// A path of `spec`'s options as the jobspec means it: a relative path is
// taken from attributes.cwd (the front end's directory) when that is given.
std::string jobspec_path(const Jobspec& spec, std::string_view path);

// The text of a file an option names (what: "hostfile", "resource set"),
// found as jobspec_path says. Errors name it as given, with the system's
// reason: `run: hostfile "hosts": No such file or directory`.
Result<std::string> read_option_file(const Jobspec& spec, std::string_view path,
                                     std::string_view what);

// Every node's topology as job.topology names it: an lstopo XML file when a
// file of that name exists (relative to attributes.cwd), else a synthetic
// description ("package:2 core:8 pu:2"); empty: this machine's.
Result<Topology> jobspec_topology(const Jobspec& spec);

// Each app's command line, by app index, for launch_plans.
std::vector<std::vector<std::string>> app_argvs(const Jobspec& spec);
// Each app's command line as one string ("./a x"), for messages.
std::vector<std::string> app_commands(const Jobspec& spec);

// Maps `spec`'s apps onto nodes of `topology`. The job's nodes are those of
// `allocation` when given (an instance's R: one node per rank, its cores and
// GPUs only; job.hosts, job.hostfile and resources.R are then not used, and
// the hosts a later app names must be among its nodes), else of
// resources.R, else of job.hosts or job.hostfile (at most one of those
// three), else this machine alone; a later app's own hosts or hostfile are
// added to them. The nodes named as this machine's host are local. The
// mpirun flags of `job` (oversubscribe, nolocal, hwthread_cpus, rankfile)
// are qualifiers of the job's --map-by; seq without FILE= reads the app's
// hosts. Errors: bad policies, hosts, files, or a job that does not fit.
Result<JobMap> map_jobspec(const Jobspec& spec, const Topology& topology,
                           const std::optional<ResourceSet>& allocation = std::nullopt);

// What job.display asks to see of `map`, each item in order, as one text:
// map, map:json, bindings, R (the job's RFC 20 resource set) and plan (each
// node's launch plan); map:svg=FILE writes FILE (from attributes.cwd)
// instead. `gantry run` prints it, and an instance's broker puts it first
// in the job's output. Errors: an SVG file that cannot be written.
Result<std::string> display_text(const Jobspec& spec, const JobMap& map,
                                 const DisplayOptions& options);

}  // namespace gantry
