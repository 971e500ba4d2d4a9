#include "shell/containment.h"

#include <signal.h>

namespace gantry::shell {

Result<std::unique_ptr<Containment>> Containment::start(const std::string& name, bool use_cgroup,
                                                        bool watched) {
    std::unique_ptr<JobCgroup> cgroup = use_cgroup ? JobCgroup::create(name) : nullptr;
    std::unique_ptr<Watcher> watcher;
    if (watched) {
        auto started = Watcher::start(cgroup ? cgroup->dir() : std::string());
        if (!started)
            return started.error();
        watcher = std::move(*started);
    }
    return std::unique_ptr<Containment>(new Containment(std::move(cgroup), std::move(watcher)));
}

Containment::~Containment() {
    end();
}

void Containment::add_group(pid_t group) {
    if (cgroup_)
        return;
    groups_.push_back(group);
    if (watcher_)
        watcher_->watch_group(group);
}

void Containment::add_directory(const std::string& path) {
    if (watcher_)
        watcher_->watch_directory(path);
}

void Containment::end() {
    if (ended_)
        return;
    ended_ = true;
    if (cgroup_)
        cgroup_->kill_all();
    for (const pid_t group : groups_)
        ::killpg(group, SIGKILL);
    if (watcher_)
        watcher_->done();
}

}  // namespace gantry::shell
