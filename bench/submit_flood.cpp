// A front end that floods an instance with jobs: submits N jobs of `true`
// (one task each) through the API as fast as one client can, one call after
// the other, then waits for all of them with job.wait {"all":true}. Prints
// the submit latency (median, p99, max), the submit rate, and the job rate
// from the first submit to the last job's INACTIVE (the instance's times).
// Exits 1 if a call fails or a job did not exit 0. bench/throughput.sh runs it.
//
// Usage: submit_flood URI N
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "overlay/client.h"
#include "util/json.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int fail(const std::string& what) {
    std::fprintf(stderr, "submit_flood: %s\n", what.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    using gantry::Json;
    if (argc != 3 || std::atol(argv[2]) <= 0)
        return fail("usage: submit_flood URI N");
    const std::string uri = argv[1];
    const long jobs = std::atol(argv[2]);
    auto client = gantry::overlay::Client::connect(uri);
    if (!client)
        return fail(client.error().str());

    const Json jobspec = {
        {"version", 1},
        {"apps", Json::array({Json{{"command", Json::array({"true"})}, {"ntasks", 1}}})},
        {"attributes", {{"cwd", "/"}, {"environment", {{"PATH", "/usr/bin:/bin"}}}}}};
    const Json params = {{"jobspec", jobspec}};

    std::vector<double> latency;
    latency.reserve(static_cast<std::size_t>(jobs));
    std::uint64_t first_id = 0;
    const auto begun = Clock::now();
    for (long i = 0; i < jobs; ++i) {
        const auto sent = Clock::now();
        auto reply = client->call("job.submit", params);
        latency.push_back(ms_between(sent, Clock::now()));
        if (!reply)
            return fail("job.submit: " + reply.error().str());
        if (i == 0)
            first_id = reply->at("id").get<std::uint64_t>();
    }
    const auto submitted = Clock::now();
    auto waited = client->call("job.wait", {{"all", true}});
    const auto finished = Clock::now();
    if (!waited)
        return fail("job.wait: " + waited.error().str());

    // The instance's own times: the first job's submit, the last INACTIVE.
    auto listed = client->call("job.list", Json::object());
    if (!listed)
        return fail("job.list: " + listed.error().str());
    double start = 0, end = 0;
    long seen = 0, bad = 0;
    for (const Json& job : listed->at("jobs")) {
        const auto id = job.at("id").get<std::uint64_t>();
        if (id < first_id || id >= first_id + static_cast<std::uint64_t>(jobs))
            continue;
        ++seen;
        if (job.at("state") != "INACTIVE" || job.at("exit_code") != 0)
            ++bad;
        if (id == first_id)
            start = job.at("submit_time").get<double>();
        end = std::max(end, job.at("state_time").get<double>());
    }

    std::sort(latency.begin(), latency.end());
    const auto at = [&](double q) {
        return latency[std::min(latency.size() - 1, static_cast<std::size_t>(q * latency.size()))];
    };
    const double submit_s = ms_between(begun, submitted) / 1000;
    std::printf(
        "submitted %ld jobs in %.2f s (%.0f submits/s): latency median %.2f ms, p99 %.2f ms, "
        "max %.2f ms\n",
        jobs, submit_s, jobs / submit_s, at(0.5), at(0.99), latency.back());
    std::printf(
        "all inactive %.2f s after the first submit: %.1f jobs/s (instance's times: %.2f s, "
        "%.1f jobs/s)\n",
        ms_between(begun, finished) / 1000, jobs / (ms_between(begun, finished) / 1000),
        end - start, jobs / (end - start));
    if (seen != jobs || bad != 0)
        return fail(std::to_string(seen) + " of " + std::to_string(jobs) + " jobs listed, " +
                    std::to_string(bad) + " not INACTIVE with exit code 0");
    return 0;
}
