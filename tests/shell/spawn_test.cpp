// Finding a task's command before anything starts, as execvp would; and a
// started task's ties to the shell: it dies with the shell's process, and
// it joins the job's cgroup, whose kill ends it.
#include "shell/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "shell/cgroup.h"
#include "support/leftovers.h"
#include "support/scratch.h"

namespace gantry::shell {
namespace {

class FindCommand : public testing::Test {
protected:
    void SetUp() override {
        std::filesystem::create_directories(dir_ + "/bin1");
        std::filesystem::create_directories(dir_ + "/bin2/dir");
        file("bin1/plain", 0644);
        file("bin2/plain", 0755);
        file("bin1/tool", 0755);
        file("bin2/tool", 0755);
        file("bin1/locked", 0644);
    }
    void file(const std::string& name, mode_t mode) {
        std::ofstream(dir_ + "/" + name) << "#!/bin/sh\n";
        chmod((dir_ + "/" + name).c_str(), mode);
    }
    const test::ScratchDir scratch_{"gantry-spawn-test"};
    const std::string dir_ = scratch_.path();
};

TEST_F(FindCommand, SearchPath) {
    const std::string path = dir_ + "/bin1:" + dir_ + "/bin2";
    // The first executable file wins; one that is not executable is passed over.
    EXPECT_EQ(find_command("tool", path, "").path, dir_ + "/bin1/tool");
    EXPECT_EQ(find_command("plain", path, "").path, dir_ + "/bin2/plain");
    EXPECT_EQ(find_command("plain", path, "").error, 0);
    // Found only without the execute bit: permission denied (126).
    EXPECT_EQ(find_command("locked", path, "").error, EACCES);
    EXPECT_EQ(find_command("missing", path, "").error, ENOENT);
    // A directory is not a command.
    EXPECT_EQ(find_command("dir", dir_ + "/bin2", "").error, ENOENT);
}

TEST_F(FindCommand, RelativeEntriesAndNamesAreTheTasksDirectory) {
    EXPECT_EQ(find_command("tool", "bin2", dir_).path, "bin2/tool");
    EXPECT_EQ(find_command("tool", ":/nonexistent", dir_ + "/bin1").path, "./tool");
    EXPECT_EQ(find_command("./bin1/tool", "", dir_).path, "./bin1/tool");
    EXPECT_EQ(find_command("./bin1/tool", "", dir_).error, 0);
    EXPECT_EQ(find_command("./bin1/tool", "", "/").error, ENOENT);
}

TEST_F(FindCommand, NameWithSlashIsNotSearched) {
    EXPECT_EQ(find_command(dir_ + "/bin1/tool", "/nonexistent", "").error, 0);
    EXPECT_EQ(find_command(dir_ + "/bin1/plain", "", "").error, EACCES);
    EXPECT_EQ(find_command(dir_ + "/bin2/dir", "", "").error, EISDIR);
    EXPECT_EQ(find_command(dir_ + "/bin1/tool/x", "", "").error, ENOTDIR);
    EXPECT_EQ(find_command("", dir_ + "/bin1", "").error, ENOENT);
}

TEST(SearchPath, FromTheEnvironment) {
    EXPECT_EQ(search_path_of({"HOME=/root", "PATH=/a:/b"}), "/a:/b");
    EXPECT_EQ(search_path_of({"HOME=/root", "MYPATH=/x"}), "/bin:/usr/bin");
}

TEST(StartError, ExitCodes) {
    EXPECT_EQ(exit_code_of_start_error(ENOENT), 127);
    EXPECT_EQ(exit_code_of_start_error(EACCES), 126);
    EXPECT_EQ(exit_code_of_start_error(ENOEXEC), 126);
}

// /dev/null as each of a task's descriptors (numbers of at least 4, as
// Spawner::start wants them), closed with the object.
class NullFds {
public:
    NullFds() {
        const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int& fd : fds_)
            fd = fcntl(null, F_DUPFD_CLOEXEC, 4);
        close(null);
    }
    NullFds(const NullFds&) = delete;
    NullFds& operator=(const NullFds&) = delete;
    ~NullFds() {
        for (const int fd : fds_)
            close(fd);
    }
    TaskFds task_fds() const { return {fds_[0], fds_[1], fds_[2], fds_[3]}; }

private:
    int fds_[4] = {-1, -1, -1, -1};
};

// A task running `sleep marker`.
Task sleep_task(const std::string& marker) {
    Task task;
    task.argv = {"sleep", marker};
    return task;
}

std::string sleep_path() {
    return find_command("sleep", "/usr/bin:/bin", "").path;
}

// The process that started the task exits without a word (no watcher, no
// process group killed): the kernel kills the task (PR_SET_PDEATHSIG).
TEST(Spawner, TaskDiesWithTheProcessThatStartedIt) {
    const test::Leftovers sleeper(test::unique_sleep_argument());
    const pid_t shell = fork();
    if (shell == 0) {
        const Job job;
        Spawner spawner(job, std::nullopt);
        const NullFds fds;
        const StartResult started =
            spawner.start(sleep_task(sleeper.marker()), sleep_path(), fds.task_fds());
        _exit(started.failed == StartStep::kNone ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(shell, &status, 0), shell);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_TRUE(sleeper.gone());
}

// The last line of /proc/PID/cgroup: "0::/path" in the v2 hierarchy.
std::string cgroup_of(pid_t pid) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
    std::string last;
    for (std::string line; std::getline(file, line);)
        if (line.starts_with("0::"))
            last = line.substr(3);
    return last;
}

// Both ways into the cgroup: started there (clone3), and moved in by the
// child itself (where the kernel cannot start it there).
TEST(Spawner, TaskJoinsTheJobsCgroupWhoseKillEndsIt) {
    if (!test::cgroups_usable())
        GTEST_SKIP() << test::kNoCgroups;
    for (const bool started_there : {true, false}) {
        SCOPED_TRACE(started_there ? "clone3 into the cgroup" : "moved in by the child");
        const std::string name = "gantry-spawn-test-" + std::to_string(getpid());
        const test::LeftoverCgroups left(name);
        auto cgroup = JobCgroup::create(name);
        ASSERT_NE(cgroup, nullptr);
        const test::Leftovers sleeper(test::unique_sleep_argument());
        const Job job;
        Spawner spawner(job, std::nullopt,
                        CgroupFds{started_there ? cgroup->dir_fd() : -1, cgroup->procs_fd()});
        const NullFds fds;
        const StartResult started =
            spawner.start(sleep_task(sleeper.marker()), sleep_path(), fds.task_fds());
        ASSERT_EQ(started.failed, StartStep::kNone) << started.error;
        EXPECT_TRUE(cgroup_of(started.pid).ends_with("/" + name)) << cgroup_of(started.pid);

        EXPECT_TRUE(cgroup->kill_all());
        int status = 0;
        ASSERT_EQ(waitpid(started.pid, &status, 0), started.pid);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
        EXPECT_FALSE(test::exists(cgroup->dir()));
        EXPECT_EQ(left.names(), std::vector<std::string>{});
    }
}

}  // namespace
}  // namespace gantry::shell
