// Writes BYTES of 80-byte lines to stdout in 64 KiB writes, as fast as the
// reader takes them: the task of the I/O benchmark.
//
// Usage: line_writer BYTES
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: line_writer BYTES\n");
        return 2;
    }
    long long left = std::atoll(argv[1]);
    constexpr int kLine = 80;
    std::string chunk;
    for (int line = 0; line < 65536 / kLine; ++line)
        chunk += std::string(kLine - 1, static_cast<char>('a' + line % 26)) + '\n';
    while (left > 0) {
        const long long size = std::min<long long>(left, static_cast<long long>(chunk.size()));
        const ssize_t written = write(1, chunk.data(), static_cast<std::size_t>(size));
        if (written <= 0)
            return 1;
        left -= written;
    }
    return 0;
}
