// Finding a task's command before anything starts, as execvp would.
#include "shell/spawn.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace gantry::shell
