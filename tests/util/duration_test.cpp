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
