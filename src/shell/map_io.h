// What the mapper takes as values (mapper/jobspec_map.h's MapInputs), read
// on this machine: the files a jobspec names, this machine's names, the
// topology job.topology names; and the files `--display map:svg=FILE`
// writes. `gantry run`, an instance's broker and its job shells go through
// here, so that the mapper itself reads and writes nothing.
#pragma once

#include <string>
#include <string_view>

#include "formats/jobspec.h"
#include "mapper/jobspec_map.h"
#include "topo/topology.h"
#include "util/error.h"

namespace gantry::shell {

// The text of a file an option names (what: "hostfile", "resource set"),
// found as jobspec_path says. Errors name it as given, with the system's
// reason: `run: hostfile "hosts": No such file or directory`.
Result<std::string> read_option_file(const Jobspec& spec, std::string_view path,
                                     std::string_view what);

// Whether `spec` names hosts: -H or --hostfile, the job's or an app's.
bool names_hosts(const Jobspec& spec);

// The files mapping `spec` may read (jobspec_files), each with its text or
// why it could not be read; this machine's host name, and its other names
// when `spec` names hosts (only then are they compared with anything). No
// topology: the caller gives job.topology's (jobspec_topology), this
// machine's, or an instance's ranks'.
MapInputs read_map_inputs(const Jobspec& spec);

// Every node's topology as job.topology names it: an lstopo XML file when a
// file of that name exists (relative to attributes.cwd), else a synthetic
// description ("package:2 core:8 pu:2"); empty: this machine's.
Result<Topology> jobspec_topology(const Jobspec& spec);

// Writes the files of `output` (map:svg=FILE) in order, up to the first
// that fails: `run: cannot write the map to "FILE"`.
Status write_display_files(const DisplayOutput& output);

}  // namespace gantry::shell
