#include "shell/pmix_clients.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "shell/fd.h"
#include "util/elf.h"

namespace gantry::shell {
namespace {

constexpr std::array<std::string_view, 5> kPmixLibraries = {
    "libpmix.", "libmpi.so.4", "libopen-pal.", "libopen-rte.", "liboshmem."};
constexpr std::array<std::string_view, 7> kInterpreters = {"python", "perl",    "ruby", "julia",
                                                           "R",      "Rscript", "node"};

bool is_interpreter(std::string_view path) {
    const std::string_view name = path.substr(path.rfind('/') + 1);
    for (const std::string_view interpreter : kInterpreters)
        if (name.starts_with(interpreter) &&
            (interpreter.size() == name.size() || interpreter != "R"))
            return true;
    return false;
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
    if (is_interpreter(path))
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
