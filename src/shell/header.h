// The header a broker hands each shell of a job on fd 4 (docs/shell.md,
// "Under an instance"): the job's id, jobspec and R, the rank of the broker
// that started the shell, the topologies of R's ranks (grouped as
// topo/rank_topologies.h says) and what the broker read to map the job
// (shell/map_inputs.h):
//   {"id":"7","jobspec":{...},"R":{...},"rank":1,
//    "topologies":[{"ranks":"0-3","xml":"<lstopo XML>"}],"map_inputs":{...}}
// A library of its own (gantry_shell_header), which the fuzz build uses
// without the rest of the shell.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/jobspec.h"
#include "formats/rset.h"
#include "mapper/jobspec_map.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::shell {

struct ShellHeader {
    std::string id;
    Jobspec jobspec;
    ResourceSet R;
    std::uint32_t rank = 0;  // the broker's
    std::size_t node = 0;    // the position of that rank among R's ranks: its node in the map
    // What the job is mapped with: the broker's reading, and in `ranks` the
    // topologies of R's ranks.
    MapInputs inputs;
};

// The header of job `id` for the shell of broker `rank`; `jobspec`,
// `topologies` and `map_inputs` as Jobspec::to_json,
// RankTopologies::to_json and map_inputs_to_json give them.
Json shell_header(const std::string& id, const Json& jobspec, const ResourceSet& R,
                  std::uint32_t rank, const Json& topologies, const Json& map_inputs);

// Errors are one line naming the member or the format at fault: `job-shell:
// the header has no "rank" (a broker rank)`, `topologies: [0].xml: ...`.
Result<ShellHeader> parse_shell_header(std::string_view text);

}  // namespace gantry::shell
