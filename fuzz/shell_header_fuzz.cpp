// Fuzzes parse_shell_header, the job shell's reading of the header its
// broker hands it: on any text, checks that what it refuses gets a one-line
// message, and that what it accepts, written again as the broker writes a
// header, is read back to the same header.
//
// Each group's XML is hwloc's to read, and hwloc 2.9 (Debian 12) crashes
// and leaks on crafted XML (fixed upstream: open-mpi/hwloc#781, #783). A
// broker sends only what hwloc itself wrote, so the target gives every
// group one valid topology's XML in place of the one it was given: what is
// fuzzed is the header, its members and their shapes. Refusals of bad XML
// are tested in tests/shell/header_test.cpp.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shell/header.h"
#include "shell/map_inputs.h"
#include "topo/topology.h"

namespace {

using gantry::shell::ShellHeader;

void require(bool condition) {
    if (!condition)
        std::abort();
}

std::string topologies_text(const ShellHeader& header) {
    return gantry::to_compact(header.inputs.ranks.to_json());
}

// `text` with the XML of each group replaced (see above), when it is a
// header with groups; else `text`.
std::string with_valid_xml(std::string_view text) {
    static const std::string valid =
        gantry::Topology::from_synthetic("package:1 core:2 pu:1").value().to_xml();
    gantry::Json header = gantry::Json::parse(text.begin(), text.end(), nullptr, false);
    if (header.is_discarded() || !header.is_object() || !header.contains("topologies") ||
        !header["topologies"].is_array())
        return std::string(text);
    for (gantry::Json& group : header["topologies"])
        if (group.is_object() && group.contains("xml") && group["xml"].is_string())
            group["xml"] = valid;
    return gantry::to_compact(header);
}

bool same(const ShellHeader& a, const ShellHeader& b) {
    return a.id == b.id && a.jobspec == b.jobspec && a.R.encode() == b.R.encode() &&
           a.rank == b.rank && a.node == b.node && topologies_text(a) == topologies_text(b) &&
           a.inputs.hostname == b.inputs.hostname && a.inputs.names == b.inputs.names &&
           a.inputs.files == b.inputs.files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto header = gantry::shell::parse_shell_header(with_valid_xml(text));
    if (!header.ok()) {
        const std::string message = header.error().str();
        require(!message.empty());
        require(message.find('\n') == std::string::npos);
        return 0;
    }
    const std::string written = gantry::to_compact(gantry::shell::shell_header(
        header->id, header->jobspec.to_json(), header->R, header->rank,
        header->inputs.ranks.to_json(), gantry::shell::map_inputs_to_json(header->inputs)));
    const auto again = gantry::shell::parse_shell_header(written);
    require(again.ok());
    require(same(*again, *header));
    return 0;
}
