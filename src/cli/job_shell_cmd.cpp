// `gantry job-shell`: a job's shell under an instance, started by its broker
// (src/broker/exec.h), never by users. It reads {"id","jobspec","R",
// "topology"} (the broker's topology as lstopo XML) on fd 4, maps the job inside R on this machine
// as `gantry run` would, and runs its tasks with the supervisor socket on fd 3 (docs/shell.md,
// "Under an instance"). Anything that stops it before the tasks start is reported on the socket as
// a shell message and ends it with exit code 1.
#include <unistd.h>

#include <cerrno>

#include <string>

#include "cli/command.h"
#include "formats/jobspec.h"
#include "formats/rset.h"
#include "mapper/jobspec_map.h"
#include "shell/plan_job.h"
#include "shell/records.h"
#include "shell/shell.h"
#include "topo/topology.h"
#include "util/json.h"

namespace gantry::cli {

namespace {

constexpr int kSupervisorFd = 3;
constexpr int kHeaderFd = 4;

std::string read_all(int fd) {
    std::string text;
    char block[65536];
    for (;;) {
        const ssize_t n = ::read(fd, block, sizeof block);
        if (n > 0)
            text.append(block, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    return text;
}

int report(const std::string& line) {
    std::string record;
    shell::records::append(record,
                           {shell::records::Record::Kind::Message, 0, 0, "gantry: " + line + "\n"});
    std::size_t written = 0;
    while (written < record.size()) {
        const ssize_t n = ::write(kSupervisorFd, record.data() + written, record.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        written += static_cast<std::size_t>(n);
    }
    return kExitRuntime;
}

// The OS indices of the PUs of R's cores on this node: where the job may run.
IdSet allocated_pus(const ResourceSet& R, const Topology& topology) {
    IdSet logical;
    for (const auto& [rank, target] : R.targets())
        for (const IdSet::Id core : target.cores)
            if (core < topology.ncores())
                logical |= topology.object(ObjectType::kCore, static_cast<unsigned>(core)).pus;
    return topology.os_pus(logical);
}

}  // namespace

int job_shell_main(int, char**) {
    auto header = parse_json("job-shell", read_all(kHeaderFd));
    ::close(kHeaderFd);
    if (!header || !header->is_object())
        return report(header ? "job-shell: the header is not an object" : header.error().str());
    auto spec = Jobspec::from_json(header->value("jobspec", Json()));
    if (!spec)
        return report(spec.error().str());
    auto R = ResourceSet::from_json(header->value("R", Json()));
    if (!R)
        return report(R.error().str());
    const std::string id = header->value("id", std::string("0"));
    // The broker's topology, when it sends it: the same machine, read once.
    const std::string xml = header->value("topology", std::string());
    auto topology = xml.empty() ? Topology::local() : Topology::from_xml_text(xml);
    if (!topology)
        return report(topology.error().str());
    auto map = map_jobspec(*spec, *topology, *R);
    if (!map)
        return report(map.error().str());
    auto settings = shell::launch_settings(*spec, *map, id);
    if (!settings)
        return report(settings.error().str());
    std::string warning;
    auto job = shell::local_job(*spec, *map, *settings, warning);
    if (!job)
        return report(job.error().str());
    if (!warning.empty())
        report(warning);
    // A task left unbound still stays inside the job's allocation.
    const IdSet allowed = allocated_pus(*R, *topology);
    for (shell::Task& task : job->tasks)
        if (task.cpus_os.empty())
            task.cpus_os = allowed;
    job->supervisor_fd = kSupervisorFd;
    return shell::run(*job);
}

}  // namespace gantry::cli
