// The seq file and the rankfile.
#include "mapper/files.h"

#include <gtest/gtest.h>

namespace gantry {
namespace {

TEST(SeqFile, HostsAndOptionalCpus) {
    const auto lines = parse_seq_file("# order\nn1\nn0 0-1\n\nn1 1:2 0 membind\n", "seq");
    ASSERT_TRUE(lines.ok()) << lines.error().str();
    ASSERT_EQ(lines->size(), 3u);
    EXPECT_EQ((*lines)[0], (SeqLine{"n1", std::nullopt}));
    EXPECT_EQ((*lines)[1], (SeqLine{"n0", CpuList{std::nullopt, IdSet{0, 1}}}));
    EXPECT_EQ((*lines)[2], (SeqLine{"n1", CpuList{1, IdSet{2}}}));
}

TEST(SeqFile, BadLines) {
    EXPECT_EQ(parse_seq_file("n0 x\n", "s").error().str(),
              "seq: s:1: bad CPU list \"x\" in \"n0 x\"");
    EXPECT_EQ(parse_seq_file("n0 1 2\n", "s").error().str(),
              "seq: s:1: expected `host [cpus]` in \"n0 1 2\"");
    EXPECT_EQ(parse_seq_file("# none\n", "s").error().str(), "seq: no hosts in \"s\"");
}

// seq without FILE=: one task per host line of the hostfile or name of -H.
TEST(SeqFile, FromTheHostsInTheirOrder) {
    const auto host = [](const char* name) { return SeqLine{name, std::nullopt}; };
    EXPECT_EQ(seq_lines_of_hostfile("# order\nu@n1 slots=4\nn0 // one\n// c\nn1 max_slots=2\n"
                                    "^n2\nn2\n"),
              (std::vector<SeqLine>{host("n1"), host("n0"), host("n1")}));
    EXPECT_EQ(seq_lines_of_hosts("b,a:2,b"),
              (std::vector<SeqLine>{host("b"), host("a"), host("b")}));
}

TEST(Rankfile, RanksHostsAndSlots) {
    const auto lines = parse_rankfile("rank 0=n0 slot=1:0-1\nrank 1=+n1 slot=3 # last\n", "rf");
    ASSERT_TRUE(lines.ok()) << lines.error().str();
    ASSERT_EQ(lines->size(), 2u);
    EXPECT_EQ((*lines)[0], (RankfileLine{0, "n0", std::nullopt, CpuList{1, IdSet{0, 1}}}));
    EXPECT_EQ((*lines)[1], (RankfileLine{1, "", 1, CpuList{std::nullopt, IdSet{3}}}));
}

TEST(Rankfile, BadLinesNameTheLine) {
    struct Case {
        std::string_view text;
        std::string_view error;
    };
    constexpr Case kCases[] = {
        {"rank 0:n0 slot=1", "rankfile: rf:1: missing '=' after the rank"},
        {"rank x=n0 slot=1", "rankfile: rf:1: bad rank \"x\""},
        {"rank 0= slot=1", "rankfile: rf:1: missing host"},
        {"rank 0=n0 cpu=1", "rankfile: rf:1: missing slot="},
        {"rank 0=n0 slot=a", "rankfile: rf:1: bad CPU list \"a\""},
        {"rank 0=+nx slot=1", "rankfile: rf:1: bad relative host \"+nx\""},
        {"rank 0=n0 slot=1\nrank 0=n1 slot=1", "rankfile: rf:2: rank 0 given twice"},
        {"host n0", "rankfile: rf:1: not a rank line (expected `rank N=host slot=LIST`)"},
        {"", "rankfile: no ranks in \"rf\""},
    };
    for (const auto& c : kCases) {
        const auto lines = parse_rankfile(c.text, "rf");
        ASSERT_FALSE(lines.ok()) << c.text;
        EXPECT_EQ(lines.error().str().substr(0, c.error.size()), c.error);
    }
}

}  // namespace
}  // namespace gantry
