#include "shell/containment.h"

#include <signal.h>

namespace gantry::shell {

Result<std::unique_ptr<Containment>> Containment::start(const std::string& name, bool use_cgroup) {
    std::unique_ptr<JobCgroup> cgroup = use_cgroup ? JobCgroup::create(name) : nullptr;
    auto watcher = Watcher::start(cgroup ? cgroup->dir() : std::string());
    if (!watcher)
        return watcher.error();
    return std::unique_ptr<Containment>(new Containment(std::move(cgroup), std::move(*watcher)));
}

Containment::~Containment() {
    end();
}

void Containment::add_group(pid_t group) {
    if (cgroup_)
        return;
    groups_.push_back(group);
    watcher_->watch_group(group);
}

void Containment::end() {
    if (ended_)
        return;
    ended_ = true;
    if (cgroup_)
        cgroup_->kill_all();
    for (const pid_t group : groups_)
        ::killpg(group, SIGKILL);
    watcher_->done();
}

}  // namespace gantry::shell
