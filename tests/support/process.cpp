#include "support/process.h"

#include <sys/syscall.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace gantry::test {

bool ended(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text))
        return true;
    // The state follows the command name, which may itself hold ')'.
    const auto paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

pid_t parent_of(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto paren = text.rfind(')');
    if (paren == std::string::npos)
        return -1;
    std::istringstream fields(text.substr(paren + 1));
    std::string state;
    pid_t parent = -1;
    fields >> state >> parent;
    return parent;
}

bool catches(pid_t pid, int signal) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("SigCgt:", 0) == 0) {
            const std::uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
            return (mask >> (signal - 1)) & 1;
        }
    return false;
}

bool reading_a_socket(pid_t pid) {
    const std::string proc = "/proc/" + std::to_string(pid);
    // "NR ARG1 ..." while blocked in a call, "running" (or nothing, once
    // gone) otherwise.
    std::ifstream call(proc + "/syscall");
    long number = -1;
    std::string fd;
    if (!(call >> number >> fd) || number != SYS_read)
        return false;
    std::error_code error;
    const auto target = std::filesystem::read_symlink(
        proc + "/fd/" + std::to_string(std::stoul(fd, nullptr, 16)), error);
    return !error && target.string().starts_with("socket:");
}

}  // namespace gantry::test
