// The encodings every message of an instance goes through, on what output
// makes of them: a reply of job.attach holding 1 MiB of output (lines of
// text, a JSON string of their own), parsed and written by gantry's paths
// and by nlohmann's own; the whole way of 1 MiB of output from its bytes
// into a message and back, as text (put_data, data_of) and as base64 (the
// way of bytes that are not UTF-8); and base64 both ways. Memory is kept
// as gantry keeps it (keep_freed_memory), or each MiB would be mapped and
// faulted in anew.
#include <string>

#include <benchmark/benchmark.h>

#include "util/base64.h"
#include "util/json.h"
#include "util/memory.h"

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
    static const std::string reply = gantry::to_compact(Json{
        {"id", 7},
        {"more", true},
        {"result",
         {{"output",
           Json::array(
               {{{"data", output_bytes()}, {"rank", 0}, {"seq", 3}, {"stream", "stdout"}}})}}}});
    return reply;
}

// Bytes into a chunk of a message and back out, as a broker and its
// client take them.
void BM_CarryText(benchmark::State& state) {
    for (auto _ : state) {
        Json chunk{{"rank", 0}, {"seq", 3}, {"stream", "stdout"}};
        gantry::put_data(chunk, output_bytes());
        const auto parsed = gantry::parse_json("bench", gantry::to_compact(chunk));
        benchmark::DoNotOptimize(gantry::data_of(*parsed));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_bytes().size()));
}
BENCHMARK(BM_CarryText);

void BM_CarryBase64(benchmark::State& state) {
    for (auto _ : state) {
        const Json chunk{{"data", gantry::base64_encode(output_bytes())},
                         {"encoding", "base64"},
                         {"rank", 0},
                         {"seq", 3},
                         {"stream", "stdout"}};
        const auto parsed = gantry::parse_json("bench", gantry::to_compact(chunk));
        benchmark::DoNotOptimize(gantry::data_of(*parsed));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * output_bytes().size()));
}
BENCHMARK(BM_CarryBase64);

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

int main(int argc, char** argv) {
    gantry::keep_freed_memory();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
