// keep_freed_memory(): buffers of a few MiB, made and freed again and again
// as output goes through a broker (a reply, its base64, its JSON), reuse
// the same pages instead of faulting new ones in each time.
#include "util/memory.h"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace gantry {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif

long minor_faults() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// The page faults of `rounds` rounds of four buffers (1, 2, 3 and 2 MiB)
// made and filled together, then freed; -1 when one cannot be made.
long faults_of_rounds(int rounds) {
    constexpr std::size_t kMiB = std::size_t{1} << 20;
    const std::size_t sizes[] = {1 * kMiB, 2 * kMiB, 3 * kMiB, 2 * kMiB};
    const long before = minor_faults();
    for (int round = 0; round < rounds; ++round) {
        std::vector<char*> buffers;
        for (const std::size_t size : sizes) {
            char* buffer = static_cast<char*>(std::malloc(size));
            if (!buffer)
                return -1;
            std::memset(buffer, round, size);
            buffers.push_back(buffer);
        }
        // Read back, so that the writes are not optimised away.
        for (std::size_t i = 0; i < buffers.size(); ++i)
            if (buffers[i][sizes[i] - 1] != static_cast<char>(round))
                return -1;
        for (char* buffer : buffers)
            std::free(buffer);
    }
    return minor_faults() - before;
}

TEST(Memory, FreedBuffersAreReusedNotFaultedInAgain) {
    if (kSanitizerAllocator)
        GTEST_SKIP() << "under AddressSanitizer, whose allocator takes no mallopt";
    keep_freed_memory();
    (void)faults_of_rounds(1);  // the heap grows once
    // 2,048 pages a round when the buffers come from the kernel anew.
    const long faults = faults_of_rounds(50);
    EXPECT_GE(faults, 0);
    EXPECT_LT(faults, 2048);
}

}  // namespace
}  // namespace gantry
