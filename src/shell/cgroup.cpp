#include "shell/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

namespace gantry::shell {
namespace {

using Clock = std::chrono::steady_clock;

// How long the killed processes of a job may take to leave its cgroup (one
// in uninterruptible sleep, on a slow disk, takes longer than a signal);
// past it the directory cannot be removed and stays.
constexpr auto kEmptyingLimit = std::chrono::seconds(10);
// Names tried after the first one is taken (a cgroup left by a shell of the
// same pid, whose number came round again).
constexpr int kNameAttempts = 100;

// A mount point of /proc/self/mountinfo with its octal escapes (`\040` for
// a space) decoded.
std::string unescaped(const std::string& field) {
    std::string text;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' &&
            field[i + 1] <= '7') {
            text += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0'));
            i += 3;
        } else {
            text += field[i];
        }
    }
    return text;
}

struct Cgroup2Mount {
    std::string root;  // the cgroup the mount shows at its mount point
    std::string mount_point;
};

// The first cgroup2 mount: fields 4 and 5 are its root and mount point, and
// the file system type follows the " - " separator.
std::optional<Cgroup2Mount> cgroup2_mount() {
    std::ifstream mountinfo("/proc/self/mountinfo");
    for (std::string line; std::getline(mountinfo, line);) {
        const auto separator = line.find(" - ");
        if (separator == std::string::npos)
            continue;
        std::istringstream after(line.substr(separator + 3));
        std::string type;
        if (!(after >> type) || type != "cgroup2")
            continue;
        std::istringstream fields(line.substr(0, separator));
        std::string id, parent, device, root, mount_point;
        if (fields >> id >> parent >> device >> root >> mount_point)
            return Cgroup2Mount{unescaped(root), unescaped(mount_point)};
    }
    return std::nullopt;
}

// The calling process's cgroup in the v2 hierarchy: the `0::` line.
std::optional<std::string> own_cgroup_path() {
    std::ifstream cgroups("/proc/self/cgroup");
    for (std::string line; std::getline(cgroups, line);)
        if (line.starts_with("0::/"))
            return line.substr(3);
    return std::nullopt;
}

std::string joined(const std::string& dir, std::string_view name) {
    std::string path = dir;
    if (!path.ends_with('/'))
        path += '/';
    path += name;
    return path;
}

bool write_text(const std::string& file, std::string_view text) {
    const Fd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Waits until no process is left in `dir` or its descendants: cgroup.events
// says `populated 0`, and announces each change to poll as POLLPRI.
bool wait_until_empty(const std::string& dir) {
    const Fd events(::open(joined(dir, "cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
    if (!events)
        return false;
    const auto deadline = Clock::now() + kEmptyingLimit;
    while (true) {
        char text[256];
        const ssize_t n = ::pread(events.get(), text, sizeof text - 1, 0);
        if (n < 0 && errno != EINTR)
            return false;
        if (n >= 0 && std::string_view(text, static_cast<std::size_t>(n)).find("populated 0") !=
                          std::string_view::npos)
            return true;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            return false;
        // Woken by the change; the cap only guards against a missed one.
        pollfd changed{events.get(), POLLPRI, 0};
        ::poll(&changed, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    }
}

// rmdir of `dir` after its descendants (a cgroup with children cannot go):
// a job's task may itself run a shell with job cgroups of its own.
bool remove_tree(const std::string& dir) {
    if (DIR* listing = ::opendir(dir.c_str())) {
        std::vector<std::string> children;
        while (const dirent* entry = ::readdir(listing)) {
            const std::string_view name = entry->d_name;
            if (entry->d_type == DT_DIR && name != "." && name != "..")
                children.push_back(joined(dir, name));
        }
        ::closedir(listing);
        for (const std::string& child : children)
            remove_tree(child);
    }
    return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
}

}  // namespace

std::optional<std::string> own_cgroup_dir() {
    const auto mount = cgroup2_mount();
    const auto path = own_cgroup_path();
    if (!mount || !path)
        return std::nullopt;
    // A mount of a part of the hierarchy (a container's) shows only what
    // lies under its root.
    std::string_view below = *path;
    if (mount->root != "/") {
        if (!below.starts_with(mount->root) ||
            (below.size() > mount->root.size() && below[mount->root.size()] != '/'))
            return std::nullopt;
        below.remove_prefix(mount->root.size());
    }
    std::string dir = mount->mount_point;
    while (!below.empty() && below.front() == '/')
        below.remove_prefix(1);
    return below.empty() ? dir : joined(dir, below);
}

bool kill_cgroup(const std::string& dir) {
    write_text(joined(dir, "cgroup.kill"), "1");
    wait_until_empty(dir);
    return remove_tree(dir);
}

std::string job_cgroup_name(pid_t shell, std::string_view job_id) {
    std::string id = job_id.empty() ? std::string("job") : std::string(job_id);
    for (char& c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
            c = '_';
    return "gantry-" + std::to_string(shell) + "-" + id;
}

std::unique_ptr<JobCgroup> JobCgroup::create(std::string_view name) {
    const auto parent = own_cgroup_dir();
    if (!parent)
        return nullptr;
    // Moving a process needs write access to the cgroup.procs of the
    // common ancestor of where it is and where it goes: the parent's.
    if (::faccessat(AT_FDCWD, joined(*parent, "cgroup.procs").c_str(), W_OK, AT_EACCESS) != 0)
        return nullptr;
    for (int attempt = 1; attempt <= kNameAttempts; ++attempt) {
        std::string dir = joined(*parent, name);
        if (attempt > 1)
            dir += "." + std::to_string(attempt);
        if (::mkdir(dir.c_str(), 0755) != 0) {
            if (errno == EEXIST)
                continue;
            return nullptr;  // read-only, not permitted, too deep: process groups instead
        }
        Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        Fd procs(::open(joined(dir, "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        // cgroup.kill (not in the root cgroup, so looked for here) is what
        // makes the end reliable.
        if (!dir_fd || !procs || ::access(joined(dir, "cgroup.kill").c_str(), F_OK) != 0) {
            ::rmdir(dir.c_str());
            return nullptr;
        }
        return std::unique_ptr<JobCgroup>(
            new JobCgroup(std::move(dir), std::move(dir_fd), std::move(procs)));
    }
    return nullptr;
}

JobCgroup::~JobCgroup() {
    kill_all();
}

bool JobCgroup::kill_all() {
    if (!removed_)
        removed_ = kill_cgroup(dir_);
    return removed_;
}

}  // namespace gantry::shell
