// Jobs of an instance leave nothing behind: what a task starts ends with
// the job, before its cores go to the next job, and even when the job's
// shell is killed.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/instance.h"
#include "support/leftovers.h"
#include "support/process.h"

namespace gantry::test {
namespace {

class JobCleanup : public InstanceTest {};

TEST_F(JobCleanup, BackgroundProcessEndsWithTheJob) {
    const Leftovers sleeper(unique_sleep_argument());
    expect({"run", "-n", "1", "sh", "-c", "sleep " + sleeper.marker() + " & echo bg"}, "bg\n", "",
           0);
    EXPECT_TRUE(sleeper.gone());
}

// The broker kills what is left of a killed shell's session; a process that
// left it is caught by the job's cgroup, which the shell's watcher kills
// and removes.
TEST_F(JobCleanup, ProcessThatLeftItsSessionEndsWithAKilledShell) {
    if (!cgroups_usable())
        GTEST_SKIP() << kNoCgroups;
    const Leftovers sleeper(unique_sleep_argument());
    const std::string id =
        submit({"-n", "1", "sh", "-c", "setsid sleep " + sleeper.marker() + " & wait"});
    // Found once more, not at once: while setsid execs sleep, its command
    // line reads empty for a moment.
    std::vector<pid_t> sleeping;
    ASSERT_TRUE(eventually([&] {
        sleeping = processes_with_argument(sleeper.marker());
        return sleeping.size() == 1;
    }));
    // sleep's parent is the task (sh), whose parent is the job's shell.
    const pid_t task = parent_of(sleeping[0]);
    ASSERT_GT(task, 1);
    const pid_t shell = parent_of(task);
    ASSERT_GT(shell, 1);
    const LeftoverCgroups cgroups("gantry-" + std::to_string(shell) + "-");
    ASSERT_EQ(cgroups.names().size(), 1u);
    ::kill(shell, SIGKILL);
    EXPECT_TRUE(sleeper.gone());
    EXPECT_TRUE(cgroups.gone());
    EXPECT_TRUE(eventually([&] { return state(id) == "INACTIVE"; })) << state(id);
}

}  // namespace
}  // namespace gantry::test
