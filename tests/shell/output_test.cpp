// Line assembly and --output/--error templates, without processes: what a
// sink receives, write by write, for the bytes a task's pipe gives.
#include "shell/output.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace gantry::shell {
namespace {

// Keeps every write apart, to check that each holds whole lines.
struct Writes : ByteWriter {
    void write(std::string_view bytes) override { writes.emplace_back(bytes); }
    std::vector<std::string> writes;
};

// The writes for `reads` given one after the other, then end of file.
std::vector<std::string> assemble(const std::vector<std::string>& reads, std::string label = "",
                                  bool unbuffered = false) {
    LineAssembler lines(std::move(label), unbuffered);
    Writes out;
    std::string scratch;
    for (const std::string& read : reads)
        lines.add(read, scratch, out);
    lines.finish(scratch, out);
    return out.writes;
}

using Writes_ = std::vector<std::string>;

struct Case {
    const char* what;
    std::vector<std::string> reads;
    std::string label;
    bool unbuffered;
    Writes_ writes;
};

const Case kCases[] = {
    {"whole lines in one write", {"a\nb\n"}, "", false, {"a\nb\n"}},
    {"a partial line waits for its end",
     {"a\nb", "c\nd", "e\n"},
     "",
     false,
     {"a\n", "bc\n", "de\n"}},
    {"lines after the completed one go in a write of their own",
     {"ab", "c\nd\ne\nf"},
     "",
     false,
     {"abc\n", "d\ne\n", "f"}},
    {"the last line without newline at end of file", {"a\nb"}, "", false, {"a\n", "b"}},
    {"nothing but a newline", {"\n"}, "", false, {"\n"}},
    {"empty reads change nothing", {"", "a", "", "\n"}, "", false, {"a\n"}},
    {"labels start every line", {"a\nb\n"}, "3: ", false, {"3: a\n3: b\n"}},
    {"labels on a completed line and the last one",
     {"a", "b\nc"},
     "3: ",
     false,
     {"3: ab\n", "3: c"}},
    {"unbuffered passes reads on as they are", {"a", "b\nc"}, "", true, {"a", "b\nc"}},
    {"unbuffered labels start lines, not reads",
     {"a", "b\nc", "\n"},
     "7: ",
     true,
     {"7: a", "b\n7: c", "\n"}},
};

TEST(LineAssembler, Cases) {
    for (const Case& c : kCases)
        EXPECT_EQ(assemble(c.reads, c.label, c.unbuffered), c.writes) << c.what;
}

// A task writing without newlines: its unterminated line is passed on every
// kLongestLine bytes, so that memory stays bounded; the rest follows as a
// line of its own. (Compared with EXPECT_TRUE: a failure would print 64 KiB.)
TEST(LineAssembler, LongUnterminatedLineIsPassedOnInPieces) {
    constexpr std::size_t kLongest = LineAssembler::kLongestLine;
    const std::string piece(kLongest, 'x');
    EXPECT_TRUE(assemble({piece + "yz", "\n"}) == (Writes_{piece, "yz\n"}));
    EXPECT_TRUE(assemble({piece + "yz", "\n"}, "1: ") == (Writes_{"1: " + piece, "1: yz\n"}));
    // Built up from small reads in the kept tail.
    std::vector<std::string> reads(kLongest / 1000 + 1, std::string(1000, 'x'));
    reads.push_back("\n");
    const std::string all(1000 * (reads.size() - 1), 'x');
    EXPECT_TRUE(assemble(reads) == (Writes_{all.substr(0, kLongest), all.substr(kLongest) + "\n"}));
    // A line that ends within the read is passed on whole, however long.
    EXPECT_TRUE(assemble({"a", piece + "\n"}) == (Writes_{"a" + piece + "\n"}));
}

// ctime(3)'s layout, whatever the locale: the day padded with a space.
TEST(Timestamp, CtimeText) {
    std::time_t when = 1767603723;  // 2026-01-05 09:02:03 UTC
    std::string expected = std::ctime(&when);
    expected.pop_back();
    EXPECT_EQ(ctime_text(when), expected);
    const char* tz = std::getenv("TZ");
    const std::string saved = tz ? tz : "";
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    EXPECT_EQ(ctime_text(when), "Mon Jan  5 09:02:03 2026");
    EXPECT_EQ(ctime_text(when + 86400 * 20 + 3600 * 14), "Sun Jan 25 23:02:03 2026");
    if (tz)
        ::setenv("TZ", saved.c_str(), 1);
    else
        ::unsetenv("TZ");
    ::tzset();
}

// The stamp, its stream, then the label, before every line and at every
// line start when unbuffered.
TEST(LineAssembler, TimestampedLines) {
    for (const bool unbuffered : {false, true}) {
        LineAssembler lines("3: ", unbuffered, "stderr");
        Writes out;
        std::string scratch;
        const std::time_t before = std::time(nullptr);
        lines.add("a\nb\n", scratch, out);
        lines.finish(scratch, out);
        const std::time_t after = std::time(nullptr);
        ASSERT_EQ(out.writes.size(), 1u);
        const std::string& text = out.writes[0];
        const std::string stamp = text.substr(0, 24);
        EXPECT_TRUE(stamp == ctime_text(before) || stamp == ctime_text(after)) << text;
        EXPECT_EQ(text, stamp + "<stderr>:3: a\n" + stamp + "<stderr>:3: b\n");
    }
    LineAssembler unlabelled("", false, "stdout");
    Writes out;
    std::string scratch;
    unlabelled.add("x\n", scratch, out);
    ASSERT_EQ(out.writes.size(), 1u);
    EXPECT_EQ(out.writes[0].substr(24), "<stdout>:x\n");
}

TEST(OutputTemplate, Expands) {
    const TemplateValues values{"f2x", 12, "node3"};
    EXPECT_EQ(expand_template("out-{{id}}-{{taskid}}.{{node}}", values), "out-f2x-12.node3");
    EXPECT_EQ(expand_template("{{taskid}}{{taskid}}", values), "1212");
    EXPECT_EQ(expand_template("plain", values), "plain");
    EXPECT_EQ(expand_template("{{other}} {{id} {{", values), "{{other}} {{id} {{");
}

}  // namespace
}  // namespace gantry::shell
