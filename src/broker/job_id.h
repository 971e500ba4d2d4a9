// A job's id, shared by the record store and the scheduler; a header of its
// own so that the scheduler, pure logic, need not include the store (SQLite).
#pragma once

#include <cstdint>

namespace gantry::broker {

// 1, 2, 3... in submit order, unique within the instance; never reused, even
// after a purge.
using JobId = std::uint64_t;

}  // namespace gantry::broker
