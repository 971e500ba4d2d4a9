// How fast the store takes a job's output: appends GANTRY_STORE_MIB MiB (16
// unless set) in 64 KiB chunks, with several buffer sizes, reads it back and
// prints the rates. The rates are printed, not checked; the bytes are.
//
//   GANTRY_STORE_MIB=100 build/tests/broker_store_throughput_test
#include "broker/store.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch.h"

namespace gantry::broker {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kChunk = 64 * 1024;

std::size_t total_mib() {
    const char* text = std::getenv("GANTRY_STORE_MIB");
    const long mib = text ? std::atol(text) : 0;
    return mib > 0 ? static_cast<std::size_t>(mib) : 16;
}

// FNV-1a over `bytes`, continued from `hash`.
std::uint64_t fnv1a(std::uint64_t hash, std::string_view bytes) {
    for (const unsigned char c : bytes) {
        hash ^= c;
        hash *= 0x100000001b3ull;
    }
    return hash;
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(StoreThroughput, AppendsOutputIn64KiBChunks) {
    const test::ScratchDir scratch("gantry-store-bench");
    const fs::path dir = scratch.path();
    const std::size_t mib = total_mib();
    const std::size_t chunks = mib * 1024 * 1024 / kChunk;

    // Bytes of every value, different in each chunk.
    std::string chunk(kChunk, '\0');
    for (std::size_t i = 0; i < kChunk; ++i)
        chunk[i] = static_cast<char>((i * 131 + i / 251) & 0xff);

    // The n-th chunk: its first and last bytes count chunks.
    const auto set_chunk = [&chunk](std::size_t n) {
        chunk[0] = static_cast<char>(n);
        chunk[kChunk - 1] = static_cast<char>(n >> 8);
    };
    std::uint64_t written_hash = 0xcbf29ce484222325ull;
    for (std::size_t n = 0; n < chunks; ++n) {
        set_chunk(n);
        written_hash = fnv1a(written_hash, chunk);
    }

    for (const std::size_t buffer :
         {std::size_t{0}, std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20}) {
        const fs::path path = dir / ("buffer-" + std::to_string(buffer) + ".db");
        Result<Store> opened = Store::open(path, {.output_buffer_bytes = buffer});
        ASSERT_TRUE(opened.ok()) << opened.error().str();
        Store& store = *opened;
        const JobId id = store.create_job({"{}", "bench", 0, 1, 16}).value();

        const Clock::time_point start = Clock::now();
        for (std::size_t n = 0; n < chunks; ++n) {
            set_chunk(n);
            ASSERT_TRUE(store.append_output(id, OutputStream::kStdout, n % 4, chunk).ok());
        }
        ASSERT_TRUE(store.flush().ok());
        const double append_s = seconds_since(start);

        // Read back as attach does: from the start, a page at a time.
        double read_s = 0;  // in output() only
        std::uint64_t read_hash = 0xcbf29ce484222325ull;
        std::size_t read_bytes = 0;
        std::uint64_t seq = 0;
        for (;;) {
            const Clock::time_point read_start = Clock::now();
            const std::vector<OutputChunk> page =
                store.output(id, {.after_seq = seq, .max_bytes = std::size_t{8} << 20}).value();
            read_s += seconds_since(read_start);
            if (page.empty())
                break;
            for (const OutputChunk& c : page) {
                read_hash = fnv1a(read_hash, c.bytes);
                read_bytes += c.bytes.size();
            }
            seq = page.back().seq;
        }

        EXPECT_EQ(read_bytes, chunks * kChunk);
        EXPECT_EQ(seq, chunks);
        EXPECT_EQ(read_hash, written_hash);
        std::printf(
            "store: %zu MiB in 64 KiB chunks, buffer %5zu KiB: append %.2f s = %.0f MiB/s"
            " (%zu chunks), read back %.2f s = %.0f MiB/s\n",
            mib, buffer / 1024, append_s, mib / append_s, chunks, read_s, mib / read_s);
    }
}

// Output as lines of 128 bytes: what buffering saves on small chunks.
TEST(StoreThroughput, AppendsOutputInLines) {
    const test::ScratchDir scratch("gantry-store-bench");
    const fs::path dir = scratch.path();
    constexpr std::size_t kLine = 128;
    constexpr std::size_t kLines = 4096;  // 512 KiB
    std::string line(kLine - 1, 'x');
    line += '\n';
    for (const std::size_t buffer : {std::size_t{0}, std::size_t{1} << 20}) {
        Result<Store> opened = Store::open(dir / ("lines-" + std::to_string(buffer) + ".db"),
                                           {.output_buffer_bytes = buffer});
        ASSERT_TRUE(opened.ok()) << opened.error().str();
        Store& store = *opened;
        const JobId id = store.create_job({"{}", "bench", 0, 1, 16}).value();
        const Clock::time_point start = Clock::now();
        for (std::size_t n = 0; n < kLines; ++n)
            ASSERT_TRUE(store.append_output(id, OutputStream::kStdout, n % 8, line).ok());
        ASSERT_TRUE(store.flush().ok());
        const double seconds = seconds_since(start);
        const std::vector<OutputChunk> last = store.output(id, {.after_seq = kLines - 1}).value();
        ASSERT_EQ(last.size(), 1u);
        EXPECT_EQ(last[0], (OutputChunk{kLines, OutputStream::kStdout, 7, line}));
        std::printf(
            "store: %zu lines of %zu bytes, buffer %5zu KiB: %.2f s = %.0f lines/s, "
            "%.1f MiB/s\n",
            kLines, kLine, buffer / 1024, seconds, kLines / seconds,
            kLines * kLine / 1048576.0 / seconds);
    }
}

// Small writes: each event its own transaction, as the job manager appends
// them one at a time.
TEST(StoreThroughput, AppendsEventsOneAtATime) {
    const test::ScratchDir scratch("gantry-store-bench");
    const fs::path dir = scratch.path();
    constexpr int kJobs = 500;
    constexpr int kEventsPerJob = 8;  // submit, then 7 more
    {
        Result<Store> opened = Store::open(dir / "events.db");
        ASSERT_TRUE(opened.ok()) << opened.error().str();
        Store& store = *opened;
        const Clock::time_point start = Clock::now();
        for (int j = 0; j < kJobs; ++j) {
            const JobId id = store.create_job({"{}", "bench", 0, 1, 16}).value();
            for (const char* name : {"depend", "alloc", "start", "finish", "release", "clean"})
                ASSERT_TRUE(store.append_event(id, 2, name, {{"status", 0}}).ok());
            ASSERT_TRUE(store.set_state(id, JobState::kInactive, 3).ok());
        }
        const double seconds = seconds_since(start);
        EXPECT_EQ(store.list().value().size(), std::size_t{kJobs});
        EXPECT_EQ(store.events(kJobs).value().size(), std::size_t{7});
        std::printf(
            "store: %d jobs of %d writes each, one transaction a write: %.2f s = %.0f "
            "writes/s, WAL %.1f MiB after\n",
            kJobs, kEventsPerJob, seconds, kJobs * kEventsPerJob / seconds,
            fs::file_size(dir / "events.db-wal") / 1048576.0);
    }
}

}  // namespace
}  // namespace gantry::broker
