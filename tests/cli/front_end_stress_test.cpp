// 200 front ends (gantry run, alloc and attach) against one instance, each
// signalled or killed at a random moment: while its job is pending, starting
// or running. Afterwards no process of any job may be alive, every job must
// be in a final state, and no core may be held. The seed is printed, and a
// failure names it: GANTRY_STRESS_SEED=N reruns the same moments.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/instance.h"
#include "support/leftovers.h"
#include "support/process.h"
#include "support/run_command.h"

namespace gantry::test {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kFrontEnds = 200;
constexpr int kAtOnce = 8;  // front ends alive together
constexpr int kSignals[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP};

std::uint32_t seed() {
    if (const char* given = std::getenv("GANTRY_STRESS_SEED"))
        return static_cast<std::uint32_t>(std::strtoul(given, nullptr, 10));
    return std::random_device{}();
}

class FrontEndStress : public InstanceTest {
protected:
    // One front end of a random kind. Every task's process has one of the
    // markers among its arguments: `foreground_` for the task itself,
    // `background_` for what it leaves running behind it.
    std::vector<std::string> front_end(std::mt19937& random) {
        const std::string task_seconds = "0." + std::to_string(random() % 4 + 1) + foreground_;
        const std::string script =
            "sleep " + background_.marker() + " & exec sleep " + task_seconds;
        switch (random() % 4) {
            case 0:  // a run that may wait for a core
                return command({"run", "-n", "1", "sh", "-c", script});
            case 1:  // one that needs every core, so it pends behind the others
                return command({"run", "-n", std::to_string(cores_), "sh", "-c", script});
            case 2:  // a child instance
                return command({"alloc", "-n", "1", "sleep", task_seconds});
            default: {  // an attach to a job of its own, submitted without a front end
                const std::string id = submit({"sh", "-c", script});
                return command({"attach", id});
            }
        }
    }

    int cores_ = 1;
    const std::string foreground_ = std::to_string(::getpid());  // "0.N" + this: unique
    Leftovers background_{unique_sleep_argument()};
};

TEST_F(FrontEndStress, FrontEndsKilledAtRandomMomentsLeaveNoProcessNoJobAndNoCore) {
    cores_ = daemon_.info().value("cores", 1);
    const std::uint32_t chosen = seed();
    std::cout << "GANTRY_STRESS_SEED=" << chosen << '\n';
    SCOPED_TRACE("GANTRY_STRESS_SEED=" + std::to_string(chosen));
    std::mt19937 random(chosen);
    const auto began = Clock::now();

    std::map<int, int> signalled;
    for (int started = 0; started < kFrontEnds; started += kAtOnce) {
        struct Front {
            std::unique_ptr<Background> process;
            std::chrono::milliseconds delay;
            int signal;
        };
        std::vector<Front> batch;
        for (int i = 0; i < kAtOnce && started + i < kFrontEnds; ++i) {
            const auto argv = front_end(random);
            batch.push_back({std::make_unique<Background>(argv, dir_),
                             std::chrono::milliseconds(random() % 400),
                             kSignals[random() % std::size(kSignals)]});
        }
        std::sort(batch.begin(), batch.end(),
                  [](const Front& a, const Front& b) { return a.delay < b.delay; });
        const auto batch_start = Clock::now();
        for (Front& front : batch) {
            std::this_thread::sleep_until(batch_start + front.delay);
            front.process->signal(front.signal);
            ++signalled[front.signal];
        }
        for (Front& front : batch) {
            // Killed, or ended by its signal or by its job's end: whatever
            // the way, it ends.
            if (front.signal != SIGKILL)
                front.process->signal(SIGKILL);
            (void)front.process->finish();
        }
    }

    // Every job reaches a final state by itself: those pending lost their
    // front ends and were canceled, those running end with their tasks.
    std::vector<std::string> wait_all = {"timeout", "60"};
    for (const std::string& word : command({"wait", "--all"}))
        wait_all.push_back(word);
    const auto all = run_program(wait_all);
    EXPECT_TRUE(all.exit_code == 0 || all.exit_code == 1) << all.err;
    const Json info = daemon_.info();
    EXPECT_EQ(info["jobs"]["pending"], 0) << info.dump();
    EXPECT_EQ(info["jobs"]["running"], 0) << info.dump();
    const int jobs = info["jobs"].value("inactive", 0);
    EXPECT_GT(jobs, 0);

    // No task, and nothing a task started, is left.
    EXPECT_TRUE(background_.gone()) << "left running: sleep " << background_.marker();
    std::size_t left = processes_with_argument(background_.marker()).size();
    for (int tenths = 1; tenths <= 4; ++tenths)
        left += processes_with_argument("0." + std::to_string(tenths) + foreground_).size();
    EXPECT_EQ(left, 0u);

    // No core is held: a job that needs every one runs at once.
    expect({"run", "-n", std::to_string(cores_), "true"}, "", "", 0);

    std::cout << "front ends: " << kFrontEnds << " (SIGKILL " << signalled[SIGKILL] << ", SIGTERM "
              << signalled[SIGTERM] << ", SIGINT " << signalled[SIGINT] << ", SIGHUP "
              << signalled[SIGHUP] << "); jobs checked: " << jobs << "; processes left: " << left
              << "; "
              << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began).count()
              << " ms\n";
}

}  // namespace
}  // namespace gantry::test
