// Durations as users type them for time limits and timeouts: a number with
// an optional unit, as flux's standard duration (`30s`, `1.5m`, `2h`,
// `500ms`, `1d`; a bare number is seconds).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry {

// Errors name `domain` and the text: `run: bad duration "5x" (say 30s, 5m, 1h)`.
Result<std::chrono::milliseconds> parse_duration(std::string_view domain, std::string_view text);

// A time limit as srun and flux run read one (-t, --time-limit): a bare
// number is minutes (`30`, `1.5`); Slurm's `M:S`, `H:M:S`, `D-H`,
// `D-H:M` and `D-H:M:S`; a duration with a unit as parse_duration reads
// it (`90s`, `2h`, `1d`); `unlimited` or `infinite` for none (0).
Result<std::chrono::milliseconds> parse_time_limit(std::string_view domain, std::string_view text);

// The wall clock as seconds since the epoch, as job records and
// time limits count it.
double epoch_seconds();

// The shortest exact spelling: 500ms, 30s, 90s, 5m, 1h, 36h.
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace gantry
