// Real gantry processes for the tests of an instance's commands: a daemon
// instance that lives as long as the test, and commands started in the
// background to be signaled and waited for.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {

// A command started in the background (not through a shell, so that SIGINT
// is not ignored), its stdout and stderr in files of `dir`; finish() waits
// for it. Killed with SIGKILL if the test leaves it running.
class Background {
public:
    Background(const std::vector<std::string>& argv, const ScratchDir& dir,
               const std::string& input_file = "/dev/null");
    ~Background();
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;

    pid_t pid() const { return pid_; }
    void signal(int number) const;
    // Whether the command has its handler for `number` in place yet.
    bool catches(int number) const;
    std::string out() const;
    // Waits (20 s at most: a failure past that) and returns what it did.
    CommandResult finish();

private:
    static inline int count_ = 0;
    std::string out_, err_;
    pid_t pid_ = -1;
};

// `gantry start --daemon --state-dir STATE_DIR`, shut down and waited for
// when the object goes, unless the test ended it (killed if it does not
// end). Failures to start are test failures; ok() says whether it started.
class DaemonInstance {
public:
    explicit DaemonInstance(std::string state_dir);
    ~DaemonInstance();
    DaemonInstance(const DaemonInstance&) = delete;
    DaemonInstance& operator=(const DaemonInstance&) = delete;

    bool ok() const { return pid_ > 0; }
    const std::string& uri() const { return uri_; }
    pid_t pid() const { return pid_; }
    std::string socket() const { return state_dir_ + "/socket"; }
    // `gantry instance info --json`: {} when it does not answer.
    nlohmann::json info() const;
    // Entries (NAME=VALUE) set for the commands below besides GANTRY_URI.
    void set_environment(std::vector<std::string> entries) { environment_ = std::move(entries); }
    // The argv of `gantry args...` inside the instance (GANTRY_URI set).
    std::vector<std::string> command(const std::vector<std::string>& args) const;
    // Runs `gantry args...` inside the instance.
    CommandResult gantry(const std::vector<std::string>& args, const std::string& input = "") const;
    // Runs it (`input` on stdin) and checks its whole stdout, stderr and exit code; failures
    // name the command line.
    void expect(const std::vector<std::string>& args, const std::string& out,
                const std::string& err, int exit_code, const std::string& input = "") const;
    // `gantry submit args...`, checked to print an id and nothing else: the id.
    std::string submit(const std::vector<std::string>& args) const;
    // `gantry info --json ID`: {} while there is no such job.
    nlohmann::json job(const std::string& id) const;
    // Its state; "" while there is no such job.
    std::string job_state(const std::string& id) const;

private:
    std::string state_dir_;
    std::string uri_;
    pid_t pid_ = -1;
    std::vector<std::string> environment_;
};

// A fixture: a daemon instance of its own for each test, in a scratch
// directory that goes with it, and its commands at hand.
class InstanceTest : public testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(daemon_.ok()); }

    std::vector<std::string> command(const std::vector<std::string>& args) const {
        return daemon_.command(args);
    }
    CommandResult gantry(const std::vector<std::string>& args,
                         const std::string& input = "") const {
        return daemon_.gantry(args, input);
    }
    void expect(const std::vector<std::string>& args, const std::string& out,
                const std::string& err, int exit_code, const std::string& input = "") const {
        daemon_.expect(args, out, err, exit_code, input);
    }
    std::string submit(const std::vector<std::string>& args) const { return daemon_.submit(args); }
    nlohmann::json info(const std::string& id) const { return daemon_.job(id); }
    std::string state(const std::string& id) const { return daemon_.job_state(id); }

    ScratchDir dir_;
    DaemonInstance daemon_{dir_ / "state"};
    const std::string uri_ = daemon_.uri();
};

}  // namespace gantry::test
