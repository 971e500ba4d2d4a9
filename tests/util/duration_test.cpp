#include "util/duration.h"

#include <gtest/gtest.h>

namespace gantry {
namespace {

using std::chrono::milliseconds;

milliseconds parsed(std::string_view text) {
    return parse_duration("run", text).value();
}

TEST(Duration, Units) {
    EXPECT_EQ(parsed("30"), milliseconds(30000));
    EXPECT_EQ(parsed("30s"), milliseconds(30000));
    EXPECT_EQ(parsed("500ms"), milliseconds(500));
    EXPECT_EQ(parsed("1.5m"), milliseconds(90000));
    EXPECT_EQ(parsed("2h"), milliseconds(7200000));
    EXPECT_EQ(parsed("1d"), milliseconds(86400000));
    EXPECT_EQ(parsed("0"), milliseconds(0));
    EXPECT_EQ(parsed(".25s"), milliseconds(250));
}

TEST(Duration, BadText) {
    for (const char* text :
         {"", "s", "5x", "-5s", "1e3", "1.2.3", "5 s", "ms", "99999999999999999999d"})
        EXPECT_EQ(parse_duration("run", text).error().str(),
                  "run: bad duration (say 30s, 5m, 1h) in \"" + std::string(text) + "\"")
            << text;
}

// srun's and flux run's -t: minutes when bare, Slurm's clock forms, FSD.
TEST(TimeLimit, SlurmAndFluxForms) {
    const std::pair<const char*, long long> kCases[] = {
        {"30", 1800000},
        {"1.5", 90000},
        {"0", 0},
        {"10s", 10000},
        {"2m", 120000},
        {"1.5h", 5400000},
        {"1d", 86400000},
        {"500ms", 500},
        {"5:30", 330000},
        {"1:00:00", 3600000},
        {"2-00:00:00", 172800000},
        {"1-2", 93600000},
        {"1-2:30", 95400000},
        {"0-0:0:7", 7000},
        {"UNLIMITED", 0},
        {"infinite", 0},
    };
    for (const auto& [text, ms] : kCases) {
        const auto limit = parse_time_limit("run", text);
        ASSERT_TRUE(limit) << text << ": " << limit.error().str();
        EXPECT_EQ(limit->count(), ms) << text;
    }
    for (const char* text : {"", "x", "5x", "-5", "1-", "1:2:3:4", "1-2:3:4:5", ":30", "1::2",
                             "1-2-3", "1e3", "1:2.5", "1234567890:00", "310310500-0"})
        EXPECT_EQ(parse_time_limit("run", text).error().str(),
                  "run: bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, or "
                  "90s, 1.5h, 1d) in \"" +
                      std::string(text) + "\"")
            << text;
}

TEST(Duration, Format) {
    EXPECT_EQ(format_duration(milliseconds(500)), "500ms");
    EXPECT_EQ(format_duration(milliseconds(30000)), "30s");
    EXPECT_EQ(format_duration(milliseconds(90000)), "90s");
    EXPECT_EQ(format_duration(milliseconds(300000)), "5m");
    EXPECT_EQ(format_duration(milliseconds(3600000)), "1h");
    EXPECT_EQ(format_duration(milliseconds(86400000)), "24h");
    EXPECT_EQ(format_duration(milliseconds(1500)), "1500ms");
    EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
}

}  // namespace
}  // namespace gantry
