#include "shell/pmix_clients.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>

#include "shell/fd.h"
#include "util/elf.h"

namespace gantry::shell {
namespace {

constexpr std::array<std::string_view, 5> kPmixLibraries = {
    "libpmix.", "libmpi.so.4", "libopen-pal.", "libopen-rte.", "liboshmem."};
// Interpreters that can load an MPI library at run time, with their
// versions in their names (python3.11).
constexpr std::array<std::string_view, 6> kInterpreters = {"python", "perl",    "ruby",
                                                           "julia",  "Rscript", "node"};
// Programs that run another one: shells and the wrappers put before a
// program (`sh -c ./app`, `numactl -l ./app`, `valgrind ./app`).
constexpr std::array<std::string_view, 30> kRunners = {
    "R",       "sh",      "bash",   "dash",   "zsh",       "ksh",        "csh",    "tcsh",
    "fish",    "env",     "time",   "nice",   "nohup",     "setsid",     "stdbuf", "timeout",
    "numactl", "taskset", "chrt",   "ionice", "valgrind",  "strace",     "ltrace", "gdb",
    "perf",    "xterm",   "podman", "docker", "apptainer", "singularity"};

bool runs_other_programs(std::string_view path) {
    const std::string_view name = path.substr(path.rfind('/') + 1);
    return std::find(kRunners.begin(), kRunners.end(), name) != kRunners.end() ||
           std::any_of(
               kInterpreters.begin(), kInterpreters.end(),
               [name](std::string_view interpreter) { return name.starts_with(interpreter); });
}

bool links_pmix(const std::vector<std::string>& libraries) {
    for (const std::string& library : libraries)
        for (const std::string_view prefix : kPmixLibraries)
            if (library.starts_with(prefix))
                return true;
    return false;
}

}  // namespace

bool may_be_pmix_client(const std::string& path) {
    // gantry links PMIx as a server (the brokers of `gantry start
    // --test-size` are its tasks), never as a client.
    std::error_code error;
    if (std::filesystem::equivalent(path, "/proc/self/exe", error))
        return false;
    if (runs_other_programs(path))
        return true;
    const Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat status {};
    if (!file || ::fstat(file.get(), &status) != 0 || status.st_size == 0)
        return true;
    const auto size = static_cast<std::size_t>(status.st_size);
    void* const mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.get(), 0);
    if (mapped == MAP_FAILED)
        return true;
    const auto libraries = needed_libraries({static_cast<const char*>(mapped), size});
    ::munmap(mapped, size);
    // Not an ELF file we read: a script, or something we cannot tell.
    return !libraries || links_pmix(*libraries);
}

}  // namespace gantry::shell
