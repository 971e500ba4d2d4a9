// How the shell reads or writes a descriptor without blocking its loop and
// without changing a file description it shares with other processes: the
// shell's own stdin, stdout and stderr, and the files it opens for output.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "shell/fd.h"

namespace gantry::shell {

enum class IoMode {
    // A file description of the shell's own with O_NONBLOCK: a pipe, FIFO,
    // terminal or device reopened through /proc/self/fd/N.
    kNonblocking,
    // A socket: every call says MSG_DONTWAIT, the description is untouched.
    kSocket,
    // A regular file: never blocks; used as is, keeping its offset and
    // append mode (a reopened description would lose them).
    kFile,
    // Reopening failed: reads wait for readiness first, writes may block.
    kBlocking,
    // Nothing there (the descriptor is closed): reads see end of file,
    // writes are dropped.
    kClosed,
};

struct IoFd {
    Fd owned;     // set when the shell opened or reopened the file
    int fd = -1;  // what to read or write
    IoMode mode = IoMode::kClosed;
};

// The shell's descriptor `fd` (1 or 2) made ready for writing, or fd 0 for reading.
IoFd writable_stdio(int fd);
IoFd readable_stdio(int fd);
// A file the shell opened itself (an --output file, an --input file).
IoFd opened_file(Fd file);

// Whether two descriptors lead to the same file (a terminal, a pipe, a
// file): then one queue must serve both, or their lines could mix.
bool same_file(int a, int b);

// One read or write that does not block (modes other than kBlocking for
// writes): the byte count, or -1 with errno (EAGAIN when it would block).
ssize_t read_some(const IoFd& io, char* buffer, std::size_t size);
ssize_t write_some(const IoFd& io, const char* bytes, std::size_t size);

// Waits until `io` can be written (poll), for a last flush.
void wait_writable(const IoFd& io);

}  // namespace gantry::shell
