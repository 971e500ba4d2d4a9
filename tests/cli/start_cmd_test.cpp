// `gantry start`, `gantry instance info` and `gantry shutdown` as real
// processes: the initial program and its exit code, the daemon, state
// directories and their lock, signals, and the API socket's peers.
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "support/machine.h"
#include "support/other_user.h"
#include "support/raw_peer.h"

#include "support/instance.h"
#include "support/leftovers.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Json = nlohmann::json;
using Lines = std::vector<std::string>;

const std::string kGantry = gantry_binary();

CommandResult run_sh(const std::string& script) {
    return run_program({"sh", "-c", script});
}

mode_t mode_of(const std::string& path) {
    struct stat status {};
    return ::stat(path.c_str(), &status) == 0 ? status.st_mode & 07777 : 0;
}

// The local machine's counts as `gantry R` reports them.
std::string local_count(const std::string& type) {
    const auto result =
        run_sh(kGantry + " R encode --local | " + kGantry + " R decode --count " + type);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return lines_of(result.out).at(0);
}

// --- The initial program -----------------------------------------------------

TEST(Start, InitialProgramSeesTheInstanceThroughGantryUri) {
    ScratchDir tmp;
    const auto result = run_program(
        {"env", "TMPDIR=" + tmp.path(), kGantry, "start", "sh", "-c",
         "echo \"$GANTRY_URI\"; dir=${GANTRY_URI#unix://}; stat -c %a \"${dir%/socket}\"; " +
             kGantry + " instance info"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const Lines lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 11u) << result.out;
    const std::regex uri_form("unix://" + tmp.path() + "/gantry-[A-Za-z0-9]{6}/socket");
    ASSERT_TRUE(std::regex_match(lines[0], uri_form)) << lines[0];
    const std::string uri = lines[0];
    const std::string dir = uri.substr(7, uri.size() - 7 - 7);
    EXPECT_EQ(lines[1], "700");
    EXPECT_EQ(lines[2], "uri        " + uri);
    EXPECT_EQ(lines[3], "owner      " + user_name() + " (uid " + std::to_string(::getuid()) + ")");
    EXPECT_TRUE(std::regex_match(lines[4], std::regex("pid        [1-9][0-9]*"))) << lines[4];
    EXPECT_EQ(lines[5], "state-dir  " + dir);
    EXPECT_EQ(lines[6], "size       1");
    EXPECT_EQ(lines[7], "cores      " + local_count("core"));
    EXPECT_EQ(lines[8], "gpus       " + local_count("gpu"));
    EXPECT_TRUE(std::regex_match(lines[9], std::regex("uptime     [0-9]s"))) << lines[9];
    EXPECT_EQ(lines[10], "jobs       0 pending, 0 running, 0 inactive");
    // The temporary state directory went with the instance.
    EXPECT_FALSE(exists(dir)) << dir;
}

TEST(Start, InfoAsJsonWithTheResourcesGiven) {
    ScratchDir tmp;
    const auto encoded = run_gantry({"R", "encode", "--ranks", "0-3", "--cores", "0-7", "--gpus",
                                     "0-1", "--hosts", "node[0-3]"});
    ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
    std::ofstream(tmp / "R.json") << encoded.out;
    // Ranks 1-3 have no broker: simulated, for the scheduler only.
    const auto result =
        run_gantry({"start", "--state-dir", tmp / "state", "--resources", tmp / "R.json",
                    "--simulate-ranks", "sh", "-c", kGantry + " instance info --json"});
    EXPECT_EQ(result.err, "");
    ASSERT_EQ(result.exit_code, 0);
    const Json info = Json::parse(result.out);
    EXPECT_EQ(info["uri"], "unix://" + tmp.path() + "/state/socket");
    EXPECT_EQ(info["state_dir"], tmp.path() + "/state");
    EXPECT_EQ(info["owner"], (Json{{"uid", ::getuid()}, {"name", user_name()}}));
    EXPECT_EQ(info["size"], 4);
    EXPECT_EQ(info["cores"], 32);
    EXPECT_EQ(info["gpus"], 8);
    EXPECT_EQ(info["jobs"], (Json{{"pending", 0}, {"running", 0}, {"inactive", 0}}));
    EXPECT_TRUE(info["pid"].is_number_integer());
    EXPECT_TRUE(info["uptime"].is_number());
    EXPECT_EQ(info.size(), 9u) << result.out;
    // A state directory given is created 0700 and kept, without its socket.
    EXPECT_EQ(mode_of(tmp / "state"), 0700u);
    EXPECT_TRUE(exists(tmp / "state/lock"));
    EXPECT_FALSE(exists(tmp / "state/socket"));
}

TEST(Start, ExitCodeIsTheInitialProgramsExitCode) {
    ScratchDir tmp;
    auto result = run_gantry({"start", "--state-dir", tmp.path(), "sh", "-c", "exit 3"});
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(result.out + result.err, "");
    result = run_gantry({"start", "sh", "-c", "kill -9 $$"});
    EXPECT_EQ(result.exit_code, 137);
    EXPECT_EQ(result.out + result.err, "");
    result = run_gantry({"start", "--", "true"});
    EXPECT_EQ(result.exit_code, 0);
    expect_gantry({"start", "/nonexistent/program", "arg"}, "", "",
                  "gantry: initial program: /nonexistent/program: No such file or directory\n",
                  127);
}

// The initial program is the instance's task: what it leaves running ends
// with the instance, and nothing of it outlives a broker killed with SIGKILL.
TEST(Start, WhatTheInitialProgramLeftRunningEndsWithTheInstance) {
    const Leftovers sleeper(unique_sleep_argument());
    expect_gantry({"start", "sh", "-c", "sleep " + sleeper.marker() + " & echo left it"}, "",
                  "left it\n", "", 0);
    EXPECT_TRUE(sleeper.gone());
}

TEST(Start, AKilledBrokerTakesItsInitialProgramAndWhatItStartedAlong) {
    ScratchDir tmp;
    const Leftovers program(unique_sleep_argument());
    const Leftovers background(unique_sleep_argument());
    // Its temporary state directory, which SIGKILL leaves, in `tmp`.
    Background start({"env", "TMPDIR=" + tmp.path(), gantry_binary(), "start", "sh", "-c",
                      "sleep " + background.marker() + " & exec sleep " + program.marker()},
                     tmp);
    ASSERT_TRUE(program.started());
    ASSERT_TRUE(background.started());
    start.signal(SIGKILL);
    EXPECT_EQ(start.finish().exit_code, 128 + SIGKILL);
    EXPECT_TRUE(program.gone());
    EXPECT_TRUE(background.gone());
}

// SIGKILL leaves a broker no time to remove its temporary state directory:
// the next instance that makes one in the same place removes it. One in use
// (a daemon's) stays, and goes with its instance; so does a kept state
// directory named as a temporary one is, whose instance has ended.
TEST(Start, TheNextInstanceRemovesAKilledOnesTemporaryDirectory) {
    const ScratchDir tmp("gantry-tmpdir");
    const std::string tmpdir = "TMPDIR=" + tmp.path();
    const auto dirs = [&tmp] {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(tmp.path()))
            names.push_back(entry.path().string());
        std::sort(names.begin(), names.end());
        return names;
    };
    const std::string kept = tmp / "gantry-jobs01";
    ASSERT_EQ(run_gantry({"start", "--state-dir", kept, "true"}).exit_code, 0);
    ASSERT_TRUE(exists(kept + "/lock"));
    const auto killed = run_program(
        {"env", tmpdir, gantry_binary(), "start", "sh", "-c", "kill -9 $PPID; exec sleep 10"});
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
    auto left = dirs();
    std::erase(left, kept);
    ASSERT_EQ(left.size(), 1u);
    EXPECT_TRUE(exists(left[0] + "/lock"));
    EXPECT_TRUE(exists(left[0] + "/temporary"));
    const auto daemon = run_program({"env", tmpdir, gantry_binary(), "start", "--daemon"});
    ASSERT_EQ(daemon.exit_code, 0) << daemon.err;
    // The daemon ends with the test, however the test ends.
    struct Ends {
        std::string uri;
        ~Ends() {
            if (!uri.empty())
                (void)run_gantry({"shutdown", "--uri", uri});
        }
    } ends{daemon.out.substr(0, daemon.out.find('\n'))};
    auto in_use = dirs();
    std::erase(in_use, left[0]);
    ASSERT_EQ(in_use.size(), 2u);  // the kept one, the daemon's

    const auto next = run_program({"env", tmpdir, gantry_binary(), "start", "true"});
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(dirs(), in_use);
    EXPECT_EQ(run_gantry({"shutdown", "--uri", std::exchange(ends.uri, {})}).exit_code, 0);
    EXPECT_TRUE(eventually([&] { return dirs() == std::vector<std::string>{kept}; }));
}

TEST(Start, ArgumentsAfterTheCommandAreItsOwn) {
    expect_gantry({"start", "echo", "--daemon", "--state-dir", "-x"}, "",
                  "--daemon --state-dir -x\n", "", 0);
    // Brackets and JSON reach the program as typed, not as lists of their items.
    expect_gantry({"start", "printf", "%s|", "[a,b]", "{\"k\":[1,2]}", "x]", "[]", "--opt=[1]"}, "",
                  "[a,b]|{\"k\":[1,2]}|x]|[]|--opt=[1]|", "", 0);
}

TEST(Start, NoCommandNeedsATerminal) {
    expect_gantry(
        {"start"}, "", "",
        "gantry: start: no CMD given and stdin is not a terminal (give CMD, or use --daemon)\n", 2);
    expect_gantry({"start", "--daemon", "true"}, "", "",
                  "gantry: start: --daemon runs no initial program; CMD is not allowed with it\n",
                  2);
}

TEST(Start, BadResourcesAreRefused) {
    ScratchDir tmp;
    expect_gantry({"start", "--resources", "/nonexistent/R.json", "true"}, "", "",
                  "gantry: start: --resources: cannot read /nonexistent/R.json: No such file or "
                  "directory\n",
                  2);
    std::ofstream(tmp / "bad.json") << "{\"version\":1}";
    const auto result = run_gantry({"start", "--resources", tmp / "bad.json", "true"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_TRUE(
        result.err.starts_with("gantry: start: --resources " + (tmp / "bad.json") + ": R: "))
        << result.err;
    EXPECT_EQ(result.out, "");
}

TEST(Start, OptionsAndHelp) {
    auto result = run_gantry({"start", "--help"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_TRUE(result.out.starts_with("Start an instance on this machine")) << result.out;
    EXPECT_NE(result.out.find("Examples:"), std::string::npos);
    expect_gantry({"start", "--bogus"}, "", "",
                  "gantry: start: unknown option \"--bogus\" (see gantry start --help)\n", 2);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"shutdown", "--help"}, {"instance", "--help"}, {"instance", "info", "--help"}}) {
        result = run_gantry(args);
        EXPECT_EQ(result.exit_code, 0) << args[0];
        EXPECT_NE(result.out.find("Examples:"), std::string::npos) << args[0];
    }
    expect_gantry({"shutdown", "--bogus"}, "", "",
                  "gantry: shutdown: unknown option \"--bogus\" (see gantry shutdown --help)\n", 2);
    expect_gantry(
        {"instance"}, "", "",
        "gantry: instance: missing subcommand: one of info (see gantry instance --help)\n", 2);
    expect_gantry(
        {"instance", "foo"}, "", "",
        "gantry: instance: unknown subcommand \"foo\": one of info (see gantry instance --help)\n",
        2);
    expect_gantry({"instance", "info", "extra"}, "", "",
                  "gantry: instance: unexpected argument \"extra\" (see gantry instance --help)\n",
                  2);
}

// --- The daemon ----------------------------------------------------------------

TEST(StartDaemon, PrintsItsUriAndRunsUntilShutdown) {
    ScratchDir tmp;
    const std::string dir = tmp / "a/state";
    DaemonInstance daemon(dir);
    EXPECT_EQ(mode_of(dir), 0700u);
    const pid_t pid = daemon.pid();
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(ended(pid));
    const auto info = run_gantry({"instance", "info", "--uri", daemon.uri()});
    EXPECT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(lines_of(info.out).at(0), "uri        " + daemon.uri());
    EXPECT_EQ(lines_of(info.out).at(2), "pid        " + std::to_string(pid));

    expect_gantry({"shutdown", "--uri", daemon.uri()}, "", "", "", 0);
    // Gone by the time shutdown returns: the socket; the directory stays.
    EXPECT_FALSE(exists(daemon.socket()));
    EXPECT_TRUE(exists(dir));
    EXPECT_TRUE(eventually([&] { return ended(pid); }));
    expect_gantry({"instance", "info", "--uri", daemon.uri()}, "", "",
                  "gantry: cannot connect to " + daemon.uri() + ": No such file or directory\n", 1);
}

TEST(StartDaemon, ReturnsToCommandSubstitutionAndCleansItsTemporaryDir) {
    const auto result =
        run_sh("uri=$(" + kGantry + " start --daemon) || exit 9; " + kGantry +
               " instance info --uri \"$uri\" | head -1; dir=${uri#unix://}; dir=${dir%/socket}; "
               "stat -c %a \"$dir\"; GANTRY_URI=$uri " +
               kGantry + " shutdown; echo \"shutdown $?\"; test -e \"$dir\" || echo removed");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const Lines lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 4u) << result.out;
    EXPECT_TRUE(std::regex_match(lines[0], std::regex("uri        unix:///.*/gantry-.{6}/socket")))
        << lines[0];
    EXPECT_EQ(lines[1], "700");
    EXPECT_EQ(lines[2], "shutdown 0");
    EXPECT_EQ(lines[3], "removed");
}

TEST(StartDaemon, SecondBrokerOnTheSameDirIsRefused) {
    ScratchDir tmp;
    const std::string dir = tmp / "state";
    {
        DaemonInstance daemon(dir);
        const std::string refusal = "gantry: instance: state directory " + dir +
                                    " is in use by another instance (pid " +
                                    std::to_string(daemon.pid()) + ")\n";
        expect_gantry({"start", "--daemon", "--state-dir", dir}, "", "", refusal, 1);
        expect_gantry({"start", "--state-dir", dir, "true"}, "", "", refusal, 1);
        // The first one is untouched.
        EXPECT_EQ(daemon.info().value("state_dir", ""), dir);
        expect_gantry({"shutdown", "--uri", daemon.uri()}, "", "", "", 0);
    }
    // Free again once it has ended.
    expect_gantry({"start", "--state-dir", dir, "true"}, "", "", "", 0);
}

TEST(StartDaemon, SigtermEndsItCleanly) {
    ScratchDir tmp;
    DaemonInstance daemon(tmp / "state");
    const pid_t pid = daemon.pid();
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    EXPECT_TRUE(eventually([&] { return ended(pid); }));
    EXPECT_FALSE(exists(daemon.socket()));
}

TEST(StartDaemon, UserSignalsDoNotEndIt) {
    ScratchDir tmp;
    DaemonInstance daemon(tmp / "state");
    ASSERT_GT(daemon.pid(), 0);
    ASSERT_TRUE(eventually([&] { return catches(daemon.pid(), SIGUSR2); }));
    ASSERT_EQ(::kill(daemon.pid(), SIGUSR1), 0);
    ASSERT_EQ(::kill(daemon.pid(), SIGUSR2), 0);
    // Still there, and answering.
    EXPECT_EQ(daemon.info().value("uri", ""), daemon.uri());
    EXPECT_FALSE(ended(daemon.pid()));
}

TEST(StartDaemon, PeerOfAnotherUidIsRefused) {
    if (::getuid() != 0)
        GTEST_SKIP() << "needs root to become another uid";
    ScratchDir tmp;
    ::chmod(tmp.path().c_str(), 0755);
    DaemonInstance daemon(tmp / "state");
    // Open the 0700 directory and the socket, so that only the broker's
    // credentials check stands in the way.
    ::chmod((tmp / "state").c_str(), 0755);
    ::chmod(daemon.socket().c_str(), 0777);
    EXPECT_EQ(connect_as_nobody(daemon.socket()),
              "{\"error\":{\"message\":\"gantry: instance of uid 0: connection refused for uid "
              "65534\"}}\n");
    EXPECT_EQ(daemon.info().value("uri", ""), daemon.uri());
}

TEST(StartDaemon, GarbageEndsThatClientOnly) {
    ScratchDir tmp;
    DaemonInstance daemon(tmp / "state");
    RawPeer bad(daemon.socket());
    RawPeer good(daemon.socket());
    ASSERT_TRUE(bad.connected());
    ASSERT_TRUE(good.connected());
    bad.send("{\"id\":1,\"method\":\"instance.info\"\n");
    EXPECT_EQ(
        bad.read_to_end(),
        "{\"error\":{\"message\":\"gantry: api: malformed request: invalid JSON at offset "
        "32 in "
        "\\\"{\\\\\\\"id\\\\\\\":1,\\\\\\\"method\\\\\\\":\\\\\\\"instance.info\\\\\\\"\\\"\"}}\n");
    good.send("{\"id\":41,\"method\":\"instance.info\"}\n{\"id\":42,\"method\":\"no.such\"}\n");
    const std::string first = good.read_line();
    EXPECT_TRUE(first.starts_with("{\"id\":41,\"result\":{\"cores\":")) << first;
    EXPECT_EQ(
        good.read_line(),
        "{\"id\":42,\"error\":{\"message\":\"gantry: api: unknown method \\\"no.such\\\"\"}}\n");
}

// --- Shutdown and signals with an initial program ------------------------------

TEST(StartShutdown, RefusedWhileTheInitialProgramRuns) {
    const auto result =
        run_gantry({"start", "sh", "-c", kGantry + " shutdown; echo \"shutdown $?\""});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "shutdown 1\n");
    EXPECT_TRUE(std::regex_match(
        result.err,
        std::regex("gantry: instance\\.shutdown: the initial program is running \\(pid [0-9]+\\); "
                   "--force sends it SIGTERM and the instance ends with it\n")))
        << result.err;
}

TEST(StartShutdown, ForceTerminatesTheInitialProgram) {
    ScratchDir tmp;
    const std::string dir = tmp / "state";
    const auto result = run_sh(kGantry + " start --state-dir " + dir + " sleep 60 & while [ ! -S " +
                               dir + "/socket ]; do sleep 0.01; done; " + kGantry +
                               " shutdown --force --uri unix://" + dir +
                               "/socket; echo \"shutdown $?\"; wait $!; echo \"start $?\"; "
                               "test -e " +
                               dir + "/socket || echo gone");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, "shutdown 0\nstart 143\ngone\n");
}

TEST(StartSignals, TermAndIntGoToTheInitialProgram) {
    ScratchDir tmp;
    for (const std::string signal : {"TERM", "INT"}) {
        const std::string dir = tmp / signal;
        // The signal goes to the program's whole process group, the
        // background sleep included (which ignores SIGINT, as a
        // non-interactive shell's background jobs do). The shell makes the
        // ready file itself: a `touch` still exiting when the signal comes
        // would die of it, and the shell would say so ("Terminated").
        const std::string program = "trap 'echo got " + signal +
                                    "; kill \\$! 2>/dev/null; exit 5' " + signal +
                                    "; sleep 60 >/dev/null 2>&1 & : > " + dir + "/ready; wait";
        const auto result =
            run_sh(kGantry + " start --state-dir " + dir + " sh -c \"" + program +
                   "\" & while [ ! -e " + dir + "/ready ]; do sleep 0.01; done; kill -" + signal +
                   " $!; wait $!; echo \"start $?\"");
        EXPECT_EQ(result.err, "") << signal;
        EXPECT_EQ(result.out, "got " + signal + "\nstart 5\n") << signal;
        EXPECT_FALSE(exists(dir + "/socket")) << signal;
    }
}

// --- Outside an instance -------------------------------------------------------

TEST(InstanceInfo, OutsideAnInstance) {
    const std::string message =
        "gantry: not inside an instance (GANTRY_URI is not set); give --uri\n";
    for (const std::string command : {"instance info", "shutdown"}) {
        const auto result = run_sh("unset GANTRY_URI; " + kGantry + " " + command);
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, message) << command;
        EXPECT_EQ(result.out, "") << command;
    }
    expect_gantry({"instance", "info", "--uri", "unix:///x/socket"}, "", "",
                  "gantry: cannot connect to unix:///x/socket: No such file or directory\n", 1);
    expect_gantry({"shutdown", "--uri", "unix:///x/socket"}, "", "",
                  "gantry: cannot connect to unix:///x/socket: No such file or directory\n", 1);
    expect_gantry({"instance", "info", "--uri", "/x/socket"}, "", "",
                  "gantry: --uri: expected unix:///PATH/TO/SOCKET in \"/x/socket\"\n", 2);
    const auto result = run_sh("GANTRY_URI=tcp://x " + kGantry + " instance info");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "gantry: GANTRY_URI: expected unix:///PATH/TO/SOCKET in \"tcp://x\"\n");
}

}  // namespace
}  // namespace gantry::test
