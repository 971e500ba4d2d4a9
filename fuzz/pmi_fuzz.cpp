// Fuzzes the PMI-1 server with the bytes of three tasks. The input is cut
// into chunks at control bytes: \x00-\x03 send the next chunk from that rank
// (3 is outside the job), \x04 starts a new chunk from the same rank and \x05
// closes the current rank's socket. Checks that every reply is one line of
// less than 1024 bytes, that a request gets at most one reply (barrier_out
// goes to every rank at once), that a rank is never answered after its
// protocol error or end of file, and that PMI_process_mapping fits a value.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pmi/server.h"

namespace {

using gantry::pmi::Effects;
using gantry::pmi::Server;

constexpr std::uint32_t kTasks = 3;

void require(bool condition) {
    if (!condition)
        std::abort();
}

gantry::pmi::JobInfo job() {
    gantry::pmi::JobInfo job;
    job.kvsname = "kvs_fuzz";
    job.size = kTasks;
    job.universe_size = kTasks;
    job.appnum_of_rank = {0, 0, 1};
    job.server_keys["PMI_process_mapping"] = "(vector,(0,1,3))";
    job.server_keys["PMI_dead_processes"] = "";
    job.server_keys["gantry.taskmap"] = "[[0,1,3,1]]";
    return job;
}

struct Harness {
    Server server{job()};
    std::array<bool, kTasks> closed{};

    void send(std::uint32_t rank, std::string_view chunk) {
        const bool was_closed = rank < kTasks && closed[rank];
        const Effects effects = server.receive(rank, chunk);
        if (rank >= kTasks) {
            require(effects.protocol_error.has_value() && effects.replies.empty());
            return;
        }
        if (was_closed) {
            require(effects.replies.empty() && !effects.protocol_error && !effects.abort_exit_code);
            return;
        }
        check(rank, chunk, effects);
        if (effects.protocol_error)
            closed[rank] = true;
    }

    void check(std::uint32_t rank, std::string_view chunk, const Effects& effects) const {
        std::size_t lines = 0;
        for (const char c : chunk)
            lines += c == '\n';
        std::size_t answers = 0;
        std::vector<std::uint32_t> barrier_out;
        for (const auto& reply : effects.replies) {
            const std::string& line = reply.line;
            require(reply.rank < kTasks && !closed[reply.rank]);
            require(!line.empty() && line.size() < 1024 && line.back() == '\n');
            require(line.find('\n') == line.size() - 1);
            if (line == "cmd=barrier_out\n") {
                barrier_out.push_back(reply.rank);
            } else {
                require(reply.rank == rank);
                ++answers;
            }
        }
        require(answers <= lines);
        // A barrier completes for every rank at once, in rank order.
        require(barrier_out.empty() || barrier_out == std::vector<std::uint32_t>{0, 1, 2});
        if (effects.abort_exit_code)
            require(effects.abort_rank == rank);
        if (effects.protocol_error) {
            const std::string& message = *effects.protocol_error;
            require(message.starts_with("pmi: ") && message.find('\n') == std::string::npos);
        }
    }
};

void check_process_mapping(const std::uint8_t* data, std::size_t size) {
    std::vector<gantry::TaskMap::NodeId> node_of_task;
    for (std::size_t i = 0; i < size && i < 2048; ++i)
        node_of_task.push_back(data[i] % 5);
    const auto map = gantry::TaskMap::from_nodes(node_of_task);
    const auto mapping = gantry::pmi::process_mapping(map);
    const std::string pmi = map.to_pmi();
    if (mapping) {
        require(*mapping == pmi && mapping->size() <= gantry::pmi::kValueMax);
        require(gantry::TaskMap::parse(*mapping)->to_raw() == map.to_raw());
    } else {
        require(pmi.empty() || pmi.size() > gantry::pmi::kValueMax);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    Harness harness;
    std::uint32_t rank = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= input.size(); ++i) {
        const bool end = i == input.size();
        const unsigned char c = end ? 0 : static_cast<unsigned char>(input[i]);
        if (!end && c > 5)
            continue;
        if (i > start)
            harness.send(rank, input.substr(start, i - start));
        start = i + 1;
        if (c <= 3)
            rank = c;
        else if (c == 5 && rank < kTasks) {
            harness.server.disconnected(rank);
            harness.closed[rank] = true;
        }
    }
    check_process_mapping(data, size);
    return 0;
}
