// From a jobspec to its JobMap: the node pool (an instance's allocation,
// the jobspec's R, its -H or hostfile, or this machine) with each node's
// topology, each app's hosts and policies. `gantry run` maps its command
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
#include "mapper/files.h"
#include "mapper/map.h"
#include "topo/rank_topologies.h"
#include "topo/topology.h"
#include "util/error.h"

namespace gantry {

// What mapping a jobspec takes from outside it, gathered by the caller
// (shell/map_io.h reads them on this machine): the mapper reads no file and
// asks the system nothing, so that `gantry run`, an instance's broker and
// its job shells map from values they can share, and tests give them as
// they are.
struct MapInputs {
    // Every node's topology outside an allocation (nodes from -H, a
    // hostfile, resources.R, or this machine alone): job.topology's, or this
    // machine's.
    std::optional<Topology> topology;
    // Each rank's topology, for the nodes of an allocation (an instance's
    // R): the node of rank r gets rank r's.
    RankTopologies ranks;
    // The files the jobspec names (jobspec_files), by the path jobspec_path
    // gives: hostfiles, seq files, rankfiles.
    FileTexts files;
    // This machine's host name: the nodes named so are local.
    std::string hostname;
    // Every name a user may give this machine (localhost, its addresses:
    // local_names()), in -H and hostfiles; needed only when the jobspec
    // names hosts.
    std::vector<std::string> names;
};

// A path of `spec`'s options as the jobspec means it: a relative path is
// taken from attributes.cwd (the front end's directory) when that is given.
std::string jobspec_path(const Jobspec& spec, std::string_view path);

// The files mapping `spec` may read, as jobspec_path finds them, each once:
// the job's and apps' hostfiles, the rankfile, the FILE= of seq and
// rankfile policies.
std::vector<std::string> jobspec_files(const Jobspec& spec);

// The hosts `spec` names (-H or --hostfile of the job and of each app), each
// once in the order first named, this machine's other names as
// inputs.hostname; relative hosts (+n1) are not among them. Errors: as
// map_jobspec's for bad hosts and unreadable hostfiles.
Result<std::vector<std::string>> jobspec_hosts(const Jobspec& spec, const MapInputs& inputs);

// Each app's command line, by app index, for launch_plans.
std::vector<std::vector<std::string>> app_argvs(const Jobspec& spec);
// Each app's command line as one string ("./a x"), for messages.
std::vector<std::string> app_commands(const Jobspec& spec);

// Maps `spec`'s apps onto nodes. The job's nodes are those of `allocation`
// when given (an instance's R: one node per rank, with its rank's topology
// in inputs.ranks, its cores and GPUs only; resources.R is then not used,
// job.hosts or job.hostfile choose which of its nodes the job uses and
// their slots, and the hosts a later app names must be among its nodes), else of resources.R, else
// of job.hosts or job.hostfile (at most one of those three), else this machine alone, all of
// inputs.topology; a later app's own hosts or hostfile are added to them.
// The nodes named as inputs.hostname are local. The mpirun flags of `job`
// (oversubscribe, nolocal, hwthread_cpus, rankfile) are qualifiers of the
// job's --map-by; seq without FILE= reads the app's hosts. Errors: bad
// policies, hosts, files (an unreadable one as `run: hostfile "h": No such
// file or directory`), or a job that does not fit.
Result<JobMap> map_jobspec(const Jobspec& spec, const MapInputs& inputs,
                           const std::optional<ResourceSet>& allocation = std::nullopt);

// What job.display asks to see of a map: text to show, and files to write.
struct DisplayOutput {
    struct File {
        std::string path;
        std::string contents;
        friend bool operator==(const File&, const File&) = default;
    };
    std::string text;
    std::vector<File> files;
};

// What job.display asks to see of `map`, each item in order: map,
// map:json, bindings, R (the job's RFC 20 resource set) and plan (each
// node's launch plan) as one text; map:svg=FILE as a file to write (FILE
// from attributes.cwd). `gantry run` writes the files, then prints the
// text; an instance's broker puts the text first in the job's output. A file
// that cannot be written is reported as `run: cannot write the map to
// "FILE"`, and the text is then not shown.
DisplayOutput display_output(const Jobspec& spec, const JobMap& map, const DisplayOptions& options);

}  // namespace gantry
