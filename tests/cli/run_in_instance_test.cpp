// `gantry run` inside an instance does what it does outside, on the
// instance's cores: one task per core without -n, --oversubscribe, the map
// and bindings --display asks for, and --uri instead of GANTRY_URI.
#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/instance.h"
#include "support/machine.h"
#include "support/run_command.h"

namespace gantry::test {
namespace {

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
}

// "0: N", "1: N"... for `tasks` tasks that each print the job's size N.
std::vector<std::string> sizes_printed(unsigned tasks) {
    std::vector<std::string> lines;
    for (unsigned rank = 0; rank < tasks; ++rank)
        lines.push_back(std::to_string(rank) + ": " + std::to_string(tasks));
    std::sort(lines.begin(), lines.end());
    return lines;
}

class RunInInstance : public InstanceTest {
protected:
    unsigned cores() const { return daemon_.info().value("cores", 0u); }
};

TEST_F(RunInInstance, WithoutNOneTaskPerCore) {
    const auto result = gantry({"run", "--label-io", "sh", "-c", "echo $GANTRY_JOB_SIZE"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out), sizes_printed(cores()));
}

TEST_F(RunInInstance, OversubscribedTasksShareTheCores) {
    const unsigned tasks = cores() + 1;
    const auto shared = gantry({"run", "-n", std::to_string(tasks), "--oversubscribe", "-l", "sh",
                                "-c", "echo $GANTRY_JOB_SIZE"});
    EXPECT_EQ(shared.err, "");
    EXPECT_EQ(shared.exit_code, 0);
    EXPECT_EQ(sorted_lines(shared.out), sizes_printed(tasks));
    expect({"run", "-n", std::to_string(tasks), "true"}, "",
           "gantry: scheduler: " + std::to_string(tasks) +
               " tasks of 1 core requested, the instance holds " + std::to_string(cores()) + "\n",
           1);
}

// The map is the instance's: shown once the job is mapped, before its output.
TEST_F(RunInInstance, DisplayShowsTheMappedJob) {
    const auto result = gantry(
        {"run", "-n", "1", "--map-by", "core:DISPLAY", "--bind-to", "core:REPORT", "echo", "done"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const std::regex expected(
        "\n=+   JOB MAP   =+\nData for JOB gantry@[0-9]+ offset 0 Total slots allocated 1\n"
        "(.|\n)*=+\nProc gantry@[0-9]+\\[0\\] Node " +
        host_name() + " bound to [^\n]*\ndone\n");
    EXPECT_TRUE(std::regex_match(result.out, expected)) << result.out;
}

// --uri names the instance as GANTRY_URI does.
TEST_F(RunInInstance, UriOption) {
    const auto result = run_gantry({"run", "--uri", uri_, "-n", "1", "sh", "-c",
                                    "test -n \"$GANTRY_JOB_ID\" && echo in $GANTRY_JOB_ID"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_TRUE(std::regex_match(result.out, std::regex("in [0-9]+\n"))) << result.out;
}

}  // namespace
}  // namespace gantry::test
