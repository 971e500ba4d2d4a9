// Fuzzes map_inputs_from_json, the job shell's reading of what its broker
// read to map the job: on any JSON document, checks that what it accepts is
// written and read back to the same inputs and the same text, and that what
// it refuses gets a one-line message naming map_inputs.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shell/map_inputs.h"

namespace {

using gantry::Json;
using gantry::MapInputs;

void require(bool condition) {
    if (!condition)
        std::abort();
}

bool same(const MapInputs& a, const MapInputs& b) {
    return a.hostname == b.hostname && a.names == b.names && a.files == b.files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Json document = Json::parse(text.begin(), text.end(), nullptr, false);
    if (document.is_discarded())
        return 0;
    const auto inputs = gantry::shell::map_inputs_from_json(document);
    if (!inputs.ok()) {
        const std::string message = inputs.error().str();
        require(message.starts_with("map_inputs: "));
        require(message.find('\n') == std::string::npos);
        return 0;
    }
    const std::string encoded = gantry::to_compact(gantry::shell::map_inputs_to_json(*inputs));
    const auto again = gantry::shell::map_inputs_from_json(Json::parse(encoded, nullptr, false));
    require(again.ok());
    require(same(*again, *inputs));
    require(gantry::to_compact(gantry::shell::map_inputs_to_json(*again)) == encoded);
    return 0;
}
