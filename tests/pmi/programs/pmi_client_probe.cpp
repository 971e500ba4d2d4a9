// A program for the PMI client's tests, run under real launchers: each rank
// puts "addr-<rank>"="value-<rank>", meets the others in a barrier, gets
// every other rank's value and prints one line
//
//     rank R of N over PMI-1: got value-0 value-2 ...
//
// (the wire the client chose, the values of the other ranks in rank
// order), then finalizes. Not
// started by a PMI launcher: "not launched by PMI" on stderr, exit 1; a PMI
// error: its message on stderr, exit 2.
#include <cstdio>
#include <string>

#include "pmi/client.h"

namespace {

int fail(const gantry::Error& error) {
    std::fprintf(stderr, "pmi_client_probe: %s\n", error.str().c_str());
    return 2;
}

}  // namespace

int main() {
    auto from_environment = gantry::pmi::Client::from_environment();
    if (!from_environment)
        return fail(from_environment.error());
    if (!*from_environment) {
        std::fprintf(stderr, "pmi_client_probe: not launched by PMI\n");
        return 1;
    }
    gantry::pmi::Client& client = **from_environment;
    const std::string rank = std::to_string(client.rank());
    if (auto done = client.put("addr-" + rank, "value-" + rank); !done)
        return fail(done.error());
    if (auto done = client.barrier(); !done)
        return fail(done.error());
    const char* wire = client.wire() == gantry::pmi::Wire::kPmi2 ? "PMI-2" : "PMI-1";
    std::string line =
        "rank " + rank + " of " + std::to_string(client.size()) + " over " + wire + ": got";
    for (int other = 0; other < client.size(); ++other) {
        if (other == client.rank())
            continue;
        auto value = client.get("addr-" + std::to_string(other));
        if (!value)
            return fail(value.error());
        line += " " + *value;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (auto done = client.finalize(); !done)
        return fail(done.error());
    return 0;
}
