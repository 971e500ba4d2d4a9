// `gantry job-shell`: a job's shell under an instance, started by its broker
// (src/broker/exec.h), never by users. It reads its header on fd 4
// (shell/header.h): the job, its R, the rank of the broker that started it,
// the topologies of R's ranks and what the broker read to map the job. It
// maps the whole job inside R as the broker did, runs the tasks of its own
// node (its rank's position among R's ranks: not its host name, which
// several brokers on one host share) with the supervisor socket on fd 3
// (docs/shell.md, "Under an instance"). Anything that stops it before the
// tasks start is reported on the socket as a shell message and ends it with
// exit code 1.
#include <unistd.h>

#include <cerrno>

#include <string>

#include "cli/command.h"
#include "formats/jobspec.h"
#include "mapper/jobspec_map.h"
#include "shell/header.h"
#include "shell/plan_job.h"
#include "shell/records.h"
#include "shell/shell.h"
#include "shell/unbound.h"
#include "util/file.h"
#include "util/json.h"

namespace gantry::cli {

namespace {

constexpr int kSupervisorFd = 3;
constexpr int kHeaderFd = 4;

int report(const std::string& line) {
    std::string record;
    shell::records::append(
        record, {shell::records::Record::Kind::kMessage, 0, 0, "gantry: " + line + "\n"});
    write_all(kSupervisorFd, record);
    return kExitRuntime;
}

}  // namespace

int job_shell_main(int, char**) {
    std::string header_text;
    read_all(kHeaderFd, header_text);  // on a failing read, what came before it
    ::close(kHeaderFd);
    auto header = shell::parse_shell_header(header_text);
    if (!header)
        return report(header.error().str());
    const Jobspec& spec = header->jobspec;
    // A simulated node's cores are not this machine's: its tasks run
    // unbound (docs/commands/start.md).
    const bool simulated = header->inputs.ranks.simulated(header->rank);
    auto map = map_jobspec(spec, header->inputs, header->R);
    if (!map)
        return report(map.error().str());
    auto settings = shell::launch_settings(spec, *map, header->id);
    if (!settings)
        return report(settings.error().str());
    std::string warning;
    auto job = shell::node_job(spec, *map, header->node, *settings, warning);
    if (!job)
        return report(job.error().str());
    if (!warning.empty())
        report(warning);
    if (simulated)
        for (shell::Task& task : job->tasks)
            task.cpus_os = IdSet{};
    else
        shell::confine_unbound_tasks_to_allocation(*job, map->nodes[header->node]);
    job->supervisor_fd = kSupervisorFd;
    // The tasks of other nodes are in other shells: the broker gathers
    // every node's barrier.
    job->pmi_through_supervisor = map->nodes.size() > 1;
    return shell::run(*job);
}

}  // namespace gantry::cli
