// What a broker read to map a job (shell::read_map_inputs, src/shell/
// map_io.h: the files the jobspec names with their texts, its host name and
// its other names; not the topologies), as JSON for the job's shells: they
// map the job again with it, and so find the broker's map on whichever
// host they run, whatever that host's own names and files. Each text is in
// base64, byte for byte:
//   {"hostname":"a","names":["localhost","10.0.0.1"],
//    "files":[{"path":"/w/hosts","base64":"YSBzbG90cz0yCg=="},
//             {"path":"/w/seq","unreadable":"No such file or directory"}]}
// A library of its own (gantry_map_inputs), which the fuzz build uses
// without the rest of the shell.
#pragma once

#include "mapper/jobspec_map.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::shell {

Json map_inputs_to_json(const MapInputs& inputs);

// Errors name the member: `map_inputs: "files"[1]: expected {"path":TEXT,
// "base64":TEXT} or {"path":TEXT,"unreadable":TEXT}`.
Result<MapInputs> map_inputs_from_json(const Json& json);

}  // namespace gantry::shell
