// Fuzzes the parsers of src/util: base64_decode and data_of (what the API's
// job.stdin and output chunks carry), parse_duration (--kill-timeout and friends),
// parse_time_limit (-t, --time-limit), needed_libraries (the ELF
// programs a job runs) and parse_json (every message), whose fast path is
// held to nlohmann's parser.
// Invariants: decoded bytes re-encode to the accepted text, any bytes
// round-trip through encode/decode and through put_data, JSON and data_of,
// and an accepted duration is never
// negative and formats back into text parse_duration accepts; a time limit
// is never negative and, formatted, reads back as the same limit; an ELF
// image either names libraries that lie inside it or is refused with a
// message. A text the fast JSON path takes, nlohmann takes to the same
// value, and to_compact writes any value (any bytes as a string among them)
// exactly as nlohmann's dump does.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/base64.h"
#include "util/duration.h"
#include "util/elf.h"
#include "util/json.h"

namespace {

void require(bool condition) {
    if (!condition)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (const auto bytes = gantry::base64_decode(text))
        require(gantry::base64_encode(*bytes) == text);
    else
        require(!gantry::base64_decode(text).error().str().empty());
    const auto again = gantry::base64_decode(gantry::base64_encode(text));
    require(again && *again == text);
    gantry::Json carried;
    gantry::put_data(carried, text);
    const auto read_back = gantry::parse_json("fuzz", gantry::to_compact(carried));
    require(read_back && gantry::data_of(*read_back).ok() && *gantry::data_of(*read_back) == text);
    const auto as_base64 = gantry::data_of({{"data", std::string(text)}, {"encoding", "base64"}});
    require(as_base64.ok() == gantry::base64_decode(text).ok());
    const gantry::Json as_string = std::string(text);
    require(gantry::to_compact(as_string) == gantry::detail::to_compact_nlohmann(as_string));

    if (const auto duration = gantry::parse_duration("fuzz", text)) {
        require(duration->count() >= 0);
        require(gantry::parse_duration("fuzz", gantry::format_duration(*duration)).ok());
    }
    if (const auto limit = gantry::parse_time_limit("fuzz", text)) {
        require(limit->count() >= 0);
        const auto again = gantry::parse_time_limit("fuzz", gantry::format_duration(*limit));
        require(again && *again == *limit);
    } else {
        require(!gantry::parse_time_limit("fuzz", text).error().str().empty());
    }
    const auto fast = gantry::detail::parse_json_fast(text);
    const auto parsed = gantry::parse_json("fuzz", text);
    require(!fast || (parsed && *fast == *parsed &&
                      gantry::detail::to_compact_nlohmann(*fast) ==
                          gantry::detail::to_compact_nlohmann(
                              gantry::Json::parse(text.begin(), text.end()))));
    if (parsed)
        require(gantry::to_compact(*parsed) == gantry::detail::to_compact_nlohmann(*parsed));
    else
        require(!parsed.error().str().empty());

    if (const auto libraries = gantry::needed_libraries(text)) {
        for (const std::string& library : *libraries)
            require(library.size() < size);
    } else {
        require(libraries.error().str().starts_with("elf: "));
    }
    return 0;
}
