// flux's --format strings as gantry's tables print them: fields, widths,
// alignment, cut values, the header line, and the refusals.
#include "cli/output_format.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gantry::cli {
namespace {

const std::map<std::string, std::string> kHeadings = {
    {"id", "JOBID"}, {"name", "NAME"}, {"ntasks", "NTASKS"}, {"s", "S"}};

using Rows = std::vector<std::vector<std::string>>;

std::string printed(std::string_view format, const Rows& rows, bool header = true) {
    auto parsed = OutputFormat::parse("jobs", format, kHeadings);
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().str());
    if (!parsed)
        return "";
    std::ostringstream out;
    parsed->print(out, rows, header);
    return out.str();
}

struct Case {
    std::string_view format;
    Rows rows;
    std::string_view out;
};

TEST(OutputFormat, Vectors) {
    const Case cases[] = {
        // Widths are least widths; a heading or a value widens its column.
        {"{id:>5} {name:<10}", {{"7", "sleep"}}, "JOBID NAME\n    7 sleep\n"},
        {"{id} {name}",
         {{"7", "sleep"}, {"1234567", "x"}},
         "JOBID   NAME\n7       sleep\n1234567 x\n"},
        {"{id:>3}|{name:^9}|", {{"7", "ab"}}, "JOBID|  NAME   |\n    7|   ab    |\n"},
        // Precision cuts values, `+` marks the cut; headings are never cut.
        {"{name:.3}", {{"hostname"}, {"ab"}}, "NAME\nhos\nab\n"},
        {"{name:<6.6+}.", {{"hostname"}, {"ab"}}, "NAME  .\nhostn+.\nab    .\n"},
        // Fill characters pad values, not headings.
        {"{id:0>6}", {{"42"}}, " JOBID\n000042\n"},
        // Literal text and braces.
        {"[{s}] {{x}}", {{"R"}}, "[S] {x}\n[R] {x}\n"},
        // Lines end without spaces.
        {"{name:<10} {s}", {{"a", ""}}, "NAME       S\na\n"},
        // A field twice.
        {"{id} {id:>6}", {{"3", "3"}}, "JOBID  JOBID\n3          3\n"},
    };
    for (const Case& c : cases)
        EXPECT_EQ(printed(c.format, c.rows), c.out) << c.format;
}

TEST(OutputFormat, WithoutHeaderTheColumnsStayWhereTheyWere) {
    EXPECT_EQ(printed("{id:>2} {name}", {{"7", "x"}}, false), "    7 x\n");
}

TEST(OutputFormat, FieldsInOrder) {
    const auto format = OutputFormat::parse("jobs", "{name} x {id:>3} {name}", kHeadings);
    ASSERT_TRUE(format.ok());
    EXPECT_EQ(format->fields(), (std::vector<std::string>{"name", "id", "name"}));
}

TEST(OutputFormat, Refusals) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"{nope}", "jobs: --format: unknown field \"nope\" (known: id, name, ntasks, s)"},
        {"{id!d}", "jobs: --format: unknown field \"id!d\" (known: id, name, ntasks, s)"},
        {"{id", "jobs: --format: a '{' is not closed at offset 0 in \"{id\""},
        {"x}",
         "jobs: --format: a '}' closes no field (write }} for a brace) at offset 1 in \"x}\""},
        {"{id:x}",
         "jobs: --format: bad spec of field \"id\" (expected [[FILL]<|>|^][WIDTH][.PRECISION][+]) "
         "at offset 4 in \"{id:x}\""},
        {"{id:.0}",
         "jobs: --format: a precision is a positive number of characters at offset 4 in "
         "\"{id:.0}\""},
    };
    for (const auto& [format, message] : cases) {
        const auto parsed = OutputFormat::parse("jobs", format, kHeadings);
        ASSERT_FALSE(parsed.ok()) << format;
        EXPECT_EQ(parsed.error().str(), message) << format;
    }
}

}  // namespace
}  // namespace gantry::cli
