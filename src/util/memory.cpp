#include "util/memory.h"

#include <malloc.h>

namespace gantry {

void keep_freed_memory() {
    constexpr int kLargestFromHeap = 4 << 20;
    constexpr int kFreeKept = 64 << 20;
    // Setting either fixes both: glibc no longer moves them as it goes.
    (void)::mallopt(M_MMAP_THRESHOLD, kLargestFromHeap);
    (void)::mallopt(M_TRIM_THRESHOLD, kFreeKept);
}

}  // namespace gantry
