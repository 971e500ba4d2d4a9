// read_all and write_all: every byte read or written, and the errno of a
// failing call.
#include "util/file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

namespace gantry {
namespace {

// What `fd` holds from its start.
std::string contents(int fd) {
    std::string text;
    char block[4096];
    ssize_t n;
    while ((n = ::pread(fd, block, sizeof block, static_cast<off_t>(text.size()))) > 0)
        text.append(block, static_cast<std::size_t>(n));
    return text;
}

TEST(WriteAll, WritesEveryByte) {
    const int fd = ::memfd_create("file_test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string bytes(3 << 20, 'x');  // more than one write may take at once
    bytes[1] = '\0';
    bytes.back() = 'y';
    EXPECT_EQ(write_all(fd, bytes), 0);
    EXPECT_EQ(write_all(fd, ""), 0);
    EXPECT_EQ(contents(fd), bytes);
    ::close(fd);
}

TEST(WriteAll, GivesTheErrnoOfAFailingWrite) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    ::close(pipe_fds[0]);
    const auto previous = ::signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(write_all(pipe_fds[1], "lost"), EPIPE);
    ::signal(SIGPIPE, previous);
    ::close(pipe_fds[1]);
    EXPECT_EQ(write_all(-1, "x"), EBADF);
}

TEST(ReadAll, AppendsEveryByteToTheEnd) {
    const int fd = ::memfd_create("file_test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string bytes(3 << 20, 'x');  // more than one read takes
    bytes[1] = '\0';
    bytes.back() = 'y';
    ASSERT_EQ(write_all(fd, bytes), 0);
    ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
    std::string text = "before ";
    EXPECT_EQ(read_all(fd, text), 0);
    EXPECT_EQ(text, "before " + bytes);
    ::close(fd);
}

TEST(ReadAll, GivesTheErrnoOfAFailingRead) {
    std::string text = "kept";
    EXPECT_EQ(read_all(-1, text), EBADF);
    EXPECT_EQ(text, "kept");
}

}  // namespace
}  // namespace gantry
