// The encodings every message of an instance goes through, on what output
// makes of them: a reply of job.attach holding 1 MiB of output (a base64
// string of 1.4 MB in JSON), parsed and written by gantry's paths and by
// nlohmann's own; and base64 both ways.
#include <string>

#include <benchmark/benchmark.h>

#include "util/base64.h"
#include "util/json.h"

namespace {

using gantry::Json;

const std::string& output_bytes() {
    static const std::string bytes = [] {
        std::string text;
        while (text.size() < (std::size_t{1} << 20))
            text += "line " + std::to_string(text.size()) + " of a task's output\n";
        return text;
    }();
    return bytes;
}

const std::string& output_reply() {
    static const std::string reply = gantry::to_compact(
        Json{{"id", 7},
             {"more", true},
             {"result",
              {{"output", Json::array({{{"data", gantry::base64_encode(output_bytes())},
                                        {"rank", 0},
                                        {"seq", 3},
                                        {"stream", "stdout"}}})}}}});
    return reply;
}

void BM_ParseReply(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(gantry::parse_json("bench", output_reply()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_reply().size()));
}
BENCHMARK(BM_ParseReply);

void BM_ParseReplyNlohmann(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(Json::parse(output_reply()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_reply().size()));
}
BENCHMARK(BM_ParseReplyNlohmann);

void BM_WriteReply(benchmark::State& state) {
    const Json reply = Json::parse(output_reply());
    for (auto _ : state)
        benchmark::DoNotOptimize(gantry::to_compact(reply));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_reply().size()));
}
BENCHMARK(BM_WriteReply);

void BM_WriteReplyNlohmann(benchmark::State& state) {
    const Json reply = Json::parse(output_reply());
    for (auto _ : state)
        benchmark::DoNotOptimize(gantry::detail::to_compact_nlohmann(reply));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_reply().size()));
}
BENCHMARK(BM_WriteReplyNlohmann);

void BM_Base64Encode(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(gantry::base64_encode(output_bytes()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_bytes().size()));
}
BENCHMARK(BM_Base64Encode);

void BM_Base64Decode(benchmark::State& state) {
    const std::string text = gantry::base64_encode(output_bytes());
    for (auto _ : state)
        benchmark::DoNotOptimize(gantry::base64_decode(text));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_Base64Decode);

}  // namespace

BENCHMARK_MAIN();
