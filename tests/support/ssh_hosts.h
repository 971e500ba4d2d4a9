// The fixture of the tests that run on hosts reached over ssh: network
// namespaces, each with its own host name, address and OpenSSH daemon,
// reached from this machine's namespace with a generated ssh configuration
// (tests/cli/scripts/ssh_hosts.sh makes and removes them). Header only: the
// script's directory is each test program's GANTRY_TEST_SCRIPTS.
#pragma once

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {

// ssh_hosts.sh's exit code where the hosts cannot be made here.
inline constexpr int kSkipped = 77;

// This machine's routes, IPv4 and IPv6, every table.
inline std::string routes() {
    return run_program({"ip", "-4", "route", "show", "table", "all"}).out +
           run_program({"ip", "-6", "route", "show", "table", "all"}).out;
}

// The network namespace of every process now, as /proc/PID/ns/net names
// it ("net:[INODE]").
inline std::vector<std::string> process_namespaces() {
    std::vector<std::string> found;
    DIR* proc = opendir("/proc");
    if (proc == nullptr)
        return found;
    while (const dirent* entry = readdir(proc)) {
        const std::string name = entry->d_name;
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        char target[PATH_MAX];
        const std::string link = "/proc/" + name + "/ns/net";
        const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
        if (n > 0)
            found.emplace_back(target, static_cast<size_t>(n));
    }
    closedir(proc);
    return found;
}

class SshHosts : public ::testing::Test {
protected:
    // Runs the bash script `script` as the COMMAND of ssh_hosts.sh with
    // `count` hosts. Before it, COMMAND notes down what the hosts are (the
    // ssh wrapper, whose directory is the script's, and each namespace's
    // name and inode) for expect_nothing_left.
    CommandResult on_hosts(const std::string& script, int count = 3) {
        routes_before_ = routes();
        const std::string note = "echo \"$GANTRY_TEST_SSH\" > " + scratch_ / "ssh" +
                                 "; for ns in $GANTRY_TEST_NETNS; do "
                                 "echo $ns $(stat -L -c %i /run/netns/$ns); done > " +
                                 scratch_ / "netns" + "; ";
        // A bound, so that a hang fails the test rather than stalling it;
        // the script removes what it made when timeout ends it.
        return run_program({"timeout", "60", "bash",
                            std::string(GANTRY_TEST_SCRIPTS) + "/ssh_hosts.sh",
                            std::to_string(count), "bash", "-c", note + script});
    }

    // No namespace, process, route or file of the hosts is left.
    void expect_nothing_left() {
        const std::string noted_ssh = read_file(scratch_ / "ssh");
        ASSERT_NE(noted_ssh, "");
        const std::string ssh = lines_of(noted_ssh).front();
        const std::string dir = ssh.substr(0, ssh.rfind('/'));
        EXPECT_FALSE(exists(dir)) << dir;
        // sshd's title holds its configuration's path, in that directory.
        EXPECT_EQ(run_program({"pgrep", "-f", dir}).out, "");

        const std::string listed = run_program({"ip", "netns", "list"}).out;
        const auto in_use = process_namespaces();
        std::vector<std::string> noted = lines_of(read_file(scratch_ / "netns"));
        std::erase(noted, "");
        ASSERT_FALSE(noted.empty());
        for (const std::string& line : noted) {
            const std::string ns = line.substr(0, line.find(' '));
            const std::string inode = line.substr(line.find(' ') + 1);
            EXPECT_EQ(listed.find(ns), std::string::npos) << listed;
            EXPECT_EQ(std::count(in_use.begin(), in_use.end(), "net:[" + inode + "]"), 0)
                << "a process is left in " << ns;
        }
        const std::string first = noted.front().substr(0, noted.front().find(' '));
        const std::string hub = first.substr(0, first.rfind('-')) + "-hub";
        EXPECT_EQ(listed.find(hub), std::string::npos) << listed;
        EXPECT_EQ(routes(), routes_before_);
    }

    // The script removes what it made whatever ends it; should it be ended
    // before it could (killed, or its clean-up cut short), what it noted is
    // removed here, and the test fails for it.
    void TearDown() override {
        std::vector<std::string> noted;
        for (const std::string& line : lines_of(read_file(scratch_ / "netns")))
            noted.push_back(line.substr(0, line.find(' ')));
        std::vector<std::string> left;
        for (const std::string& line : lines_of(run_program({"ip", "netns", "list"}).out)) {
            const std::string ns = line.substr(0, line.find(' '));
            if (!ns.empty() && std::find(noted.begin(), noted.end(), ns) != noted.end())
                left.push_back(ns);
        }
        if (left.empty())
            return;
        // The hub and this namespace's link go with the hosts (the names
        // ssh_hosts.sh gives them: TAG-0..., TAG-hub, vTAGr).
        const std::string tag = left.front().substr(0, left.front().rfind('-'));
        std::vector<std::string> argv = {"bash", "-c",
                                         ". \"$0\"; netns_remove \"$@\" " + tag +
                                             "-hub; ip link del v" + tag + "r 2>/dev/null; :",
                                         std::string(GANTRY_TEST_SCRIPTS) + "/lib/netns.sh"};
        argv.insert(argv.end(), left.begin(), left.end());
        run_program(argv);
        ADD_FAILURE() << "ssh_hosts.sh left namespaces " << ::testing::PrintToString(left)
                      << " behind; removed";
    }

    ScratchDir scratch_{"ssh-hosts-test"};
    std::string routes_before_;
};

// In COMMAND: the bridge's subnet, which the script chooses, said as "S".
inline const std::string kSubnetAsS = " | sed \"s/${GANTRY_TEST_LOCAL_ADDRESS%.*}\\./S./g\"";

}  // namespace gantry::test
