// The exec service's pieces that can be tested without a job shell.
#include "broker/exec.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch.h"

namespace gantry::broker {
namespace {

void make_file(const std::string& path, std::filesystem::perms mode) {
    std::ofstream(path) << "#!/bin/sh\n";
    std::filesystem::permissions(path, mode);
}

// The lean shell beside gantry when it can be run; gantry itself (as
// `gantry job-shell`) when it is missing or cannot be run.
TEST(JobShellProgram, IsTheLeanShellBesideGantryWhenItCanRun) {
    const test::ScratchDir dir("gantry-job-shell-program");
    const std::string gantry = dir / "gantry";
    make_file(gantry, std::filesystem::perms::owner_all);
    EXPECT_EQ(job_shell_beside(gantry), gantry);
    make_file(dir / "gantry-job-shell", std::filesystem::perms::owner_read);
    EXPECT_EQ(job_shell_beside(gantry), gantry);
    std::filesystem::permissions(dir / "gantry-job-shell", std::filesystem::perms::owner_all);
    EXPECT_EQ(job_shell_beside(gantry), dir / "gantry-job-shell");
}

// A write that completed before its queue was destroyed (a job shell that
// ended while a signal was on its way to it) still has its completion to
// run: it must not touch the queue. A use after free here is what the
// sanitizer build reports.
TEST(WriteQueue, ACompletionThatComesAfterTheQueueIsGoneTouchesNothing) {
    asio::io_context loop;
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    {
        WriteQueue queue(loop, fds[1]);  // takes the write end
        queue.write("signal 15\n");      // written at once; its completion is queued
    }
    loop.run();
    char bytes[32];
    EXPECT_EQ(std::string(bytes, static_cast<std::size_t>(::read(fds[0], bytes, sizeof bytes))),
              "signal 15\n");
    ::close(fds[0]);
}

TEST(WriteQueue, WritesInOrderAndClosesOnceWritten) {
    asio::io_context loop;
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    WriteQueue queue(loop, fds[1]);
    queue.write("one ");
    queue.write("two");
    queue.close_when_written();
    loop.run();
    EXPECT_TRUE(queue.closed());
    std::string all;
    char bytes[32];
    for (ssize_t n; (n = ::read(fds[0], bytes, sizeof bytes)) > 0;)
        all.append(bytes, static_cast<std::size_t>(n));
    EXPECT_EQ(all, "one two");  // and end of file: the write end is closed
    ::close(fds[0]);
}

}  // namespace
}  // namespace gantry::broker
