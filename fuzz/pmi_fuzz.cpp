// Fuzzes one node's PMI-1 server with the bytes of its three tasks, ranks 1,
// 2 and 4 of a job of 5, its barriers completed at once by an owner that
// adds another node's puts to the node's own. The input is cut into chunks
// at control bytes: \x00-\x02 send the next chunk from the node's first,
// second or third task and \x03 from rank 3 (another node's), \x04 starts a
// new chunk from the same rank and \x05 closes the current rank's socket.
// Checks that every reply is one line of less than 1024 bytes, that a rank
// gets no more replies than it sent lines, that a barrier completes only
// through the owner, answering every open local rank in rank order before
// the replies held behind it, that a rank is never answered after its
// protocol error or end of file, and that PMI_process_mapping fits a value.
//
// The whole input is also read as a PMI-2 command, as the client reads a
// reply: its first 6 bytes as a length, the rest as a body. A length read
// is the number its digits say; a body read is written back as the same
// bytes, and read again as the same pairs, with the length of what was
// written.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pmi/server.h"
#include "pmi/wire.h"

namespace {

using gantry::pmi::Effects;
using gantry::pmi::KeyValues;
using gantry::pmi::Server;

constexpr std::uint32_t kJobSize = 5;
constexpr std::size_t kTasks = 3;
// By control byte: the node's tasks, then another node's rank.
constexpr std::array<std::uint32_t, kTasks + 1> kRankOf = {1, 2, 4, 3};

void require(bool condition) {
    if (!condition)
        std::abort();
}

gantry::pmi::JobInfo job() {
    gantry::pmi::JobInfo job;
    job.kvsname = "kvs_fuzz";
    job.size = kJobSize;
    job.universe_size = kJobSize;
    job.appnum_of_rank = {0, 0, 1, 1, 1};
    job.server_keys["PMI_process_mapping"] = "(vector,(0,2,2),(1,1,1))";
    job.server_keys["PMI_dead_processes"] = "";
    job.server_keys["gantry.taskmap"] = "[[0,2,2,1],[1,1,1,1]]";
    job.local_ranks = gantry::IdSet{kRankOf[0], kRankOf[1], kRankOf[2]};
    return job;
}

// The task of `rank` on this node, or kTasks.
std::size_t task_of(std::uint32_t rank) {
    return static_cast<std::size_t>(std::find(kRankOf.begin(), kRankOf.begin() + kTasks, rank) -
                                    kRankOf.begin());
}

struct Harness {
    Server server{job()};
    std::array<bool, kTasks> closed{};
    std::array<std::size_t, kTasks> lines_sent{};
    std::array<std::size_t, kTasks> replies{};

    void send(std::size_t task, std::string_view chunk) {
        const std::uint32_t rank = kRankOf[task];
        const Effects effects = server.receive(rank, chunk);
        if (task == kTasks) {
            require(effects.protocol_error.has_value() && effects.replies.empty() &&
                    !effects.local_barrier);
            return;
        }
        if (closed[task]) {
            require(effects.replies.empty() && !effects.protocol_error &&
                    !effects.abort_exit_code && !effects.local_barrier);
            return;
        }
        lines_sent[task] += static_cast<std::size_t>(std::count(chunk.begin(), chunk.end(), '\n'));
        // Barriers complete through the owner only.
        for (const auto& reply : effects.replies)
            require(reply.rank == rank && reply.line != "cmd=barrier_out\n");
        check_replies(effects);
        if (effects.abort_exit_code)
            require(effects.abort_rank == rank);
        if (effects.protocol_error) {
            const std::string& message = *effects.protocol_error;
            require(message.starts_with("pmi: ") && message.find('\n') == std::string::npos);
            closed[task] = true;
        }
        require(server.barrier_waiting() == effects.local_barrier.has_value());
        if (effects.local_barrier)
            complete_barrier(effects.local_barrier->puts);
        else
            require(!server.barrier_complete({}));
    }

    // The owner: this node's puts and another node's, some of which no
    // task could have made.
    void complete_barrier(KeyValues puts) {
        puts.insert_or_assign("-bcast-1-3", "2F6465762F");
        puts.insert_or_assign("spaced", "a b");
        puts.insert_or_assign("PMI_process_mapping", "(vector,(0,5,1))");
        const auto done = server.barrier_complete(puts);
        require(done.ok() && !done->protocol_error && !done->abort_exit_code &&
                !done->local_barrier);
        // barrier_out to every open local rank, in rank order, then the
        // replies held behind them, rank by rank.
        std::vector<std::uint32_t> expected;
        for (std::size_t task = 0; task < kTasks; ++task)
            if (!closed[task])
                expected.push_back(kRankOf[task]);
        std::sort(expected.begin(), expected.end());
        const auto& out = done->replies;
        require(out.size() >= expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i)
            require(out[i].rank == expected[i] && out[i].line == "cmd=barrier_out\n");
        for (std::size_t i = expected.size(); i < out.size(); ++i)
            require(i == expected.size() || out[i - 1].rank <= out[i].rank);
        check_replies(*done);
        require(!server.barrier_waiting() && !server.barrier_complete({}));
    }

    void check_replies(const Effects& effects) {
        for (const auto& reply : effects.replies) {
            const std::string& line = reply.line;
            const std::size_t task = task_of(reply.rank);
            require(task < kTasks && !closed[task]);
            require(!line.empty() && line.size() < 1024 && line.back() == '\n');
            require(line.find('\n') == line.size() - 1);
            require(++replies[task] <= lines_sent[task]);
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

void check_pmi2_command(std::string_view input) {
    using gantry::pmi::kPmi2LengthSize;
    using gantry::pmi::Pmi2Command;
    const std::string_view prefix = input.substr(0, std::min(input.size(), kPmi2LengthSize));
    if (const auto length = Pmi2Command::parse_length(prefix)) {
        // Its digits, in one run between spaces, say that number.
        require(*length >= 1 && *length <= gantry::pmi::kPmi2CommandMax);
        const std::size_t first = prefix.find_first_not_of(' ');
        const std::size_t end = prefix.find(' ', first);
        const std::string_view digits = prefix.substr(first, end - first);
        require(prefix.find_first_not_of(' ', digits.size() + first) == std::string_view::npos);
        require(std::stoull(std::string(digits)) == *length);
    }
    const std::string_view body = input.substr(prefix.size());
    const auto command = Pmi2Command::parse(body);
    if (!command) {
        require(command.error().message().find('\n') == std::string::npos);
        return;
    }
    // Read and written back, a body is the same bytes: only ';' are doubled.
    require(!command->pairs().empty() && command->pairs().front().key == "cmd");
    require(command->body() == body);
    if (body.size() > gantry::pmi::kPmi2CommandMax)
        return;
    const std::string wire = command->to_wire();
    const auto length =
        Pmi2Command::parse_length(std::string_view(wire).substr(0, kPmi2LengthSize));
    require(length && *length == wire.size() - kPmi2LengthSize);
    const auto again = Pmi2Command::parse(std::string_view(wire).substr(kPmi2LengthSize));
    require(again && *again == *command);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    Harness harness;
    std::size_t task = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= input.size(); ++i) {
        const bool end = i == input.size();
        const unsigned char c = end ? 0 : static_cast<unsigned char>(input[i]);
        if (!end && c > 5)
            continue;
        if (i > start)
            harness.send(task, input.substr(start, i - start));
        start = i + 1;
        if (c <= kTasks) {
            task = c;
        } else if (c == 5) {
            harness.server.disconnected(kRankOf[task]);  // ignored for another node's rank
            if (task < kTasks)
                harness.closed[task] = true;
        }
    }
    check_process_mapping(data, size);
    check_pmi2_command(input);
    return 0;
}
