// `gantry job-shell`: a job's shell under an instance, started by its broker
// (src/broker/exec.h), never by users. It reads {"id","jobspec","R","rank",
// "topologies"} on fd 4: the job, its R, the rank of the broker that started
// it, and the topologies of R's ranks (grouped, as lstopo XML:
// topo/rank_topologies.h). It maps the whole job inside R as the broker did,
// runs the tasks of its own node (its rank's position among R's ranks: not
// its host name, which several brokers on one host share) with the
// supervisor socket on fd 3 (docs/shell.md, "Under an instance"). Anything
// that stops it before the tasks start is reported on the socket as a shell
// message and ends it with exit code 1.
#include <unistd.h>

#include <cerrno>

#include <string>

#include "cli/command.h"
#include "formats/jobspec.h"
#include "formats/rset.h"
#include "mapper/jobspec_map.h"
#include "shell/map_inputs.h"
#include "shell/plan_job.h"
#include "shell/records.h"
#include "shell/shell.h"
#include "shell/unbound.h"
#include "topo/rank_topologies.h"
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

// The position of the shell's rank among R's ranks: its node in the map.
Result<std::size_t> node_of_rank(const Json& header, const ResourceSet& R) {
    const Json rank = header.value("rank", Json());
    if (!rank.is_number_unsigned())
        return Error("job-shell", "the header has no \"rank\" (a broker rank)");
    const IdSet ranks = R.ranks();
    const auto value = rank.get<std::uint64_t>();
    const auto index = value <= IdSet::kMaxId
                           ? ranks.index_of(static_cast<ResourceSet::Rank>(value))
                           : std::nullopt;
    if (!index)
        return Error("job-shell",
                     "rank " + rank.dump() + " is not among R's ranks (" + ranks.encode() + ")");
    return static_cast<std::size_t>(*index);
}

}  // namespace

int job_shell_main(int, char**) {
    std::string header_text;
    read_all(kHeaderFd, header_text);  // on a failing read, what came before it
    auto header = parse_json("job-shell", header_text);
    ::close(kHeaderFd);
    if (!header || !header->is_object())
        return report(header ? "job-shell: the header is not an object" : header.error().str());
    auto spec = Jobspec::from_json(header->value("jobspec", Json()));
    if (!spec)
        return report(spec.error().str());
    auto R = ResourceSet::from_json(header->value("R", Json()));
    if (!R)
        return report(R.error().str());
    auto node = node_of_rank(*header, *R);
    if (!node)
        return report(node.error().str());
    const std::string id = header->value("id", std::string("0"));
    // The broker's topologies of R's ranks: the nodes it mapped the job on.
    auto topologies = RankTopologies::from_json(header->value("topologies", Json()));
    if (!topologies)
        return report(topologies.error().str());
    // A simulated node's cores are not this machine's: its tasks run
    // unbound (docs/commands/start.md).
    const bool simulated = topologies->simulated(header->value("rank", 0u));
    // Not read here: this host's names and files may not be those of the
    // broker's host, where the job was mapped.
    auto inputs = shell::map_inputs_from_json(header->value("map_inputs", Json()));
    if (!inputs)
        return report(inputs.error().str());
    inputs->ranks = std::move(*topologies);
    auto map = map_jobspec(*spec, *inputs, *R);
    if (!map)
        return report(map.error().str());
    auto settings = shell::launch_settings(*spec, *map, id);
    if (!settings)
        return report(settings.error().str());
    std::string warning;
    auto job = shell::node_job(*spec, *map, *node, *settings, warning);
    if (!job)
        return report(job.error().str());
    if (!warning.empty())
        report(warning);
    if (simulated)
        for (shell::Task& task : job->tasks)
            task.cpus_os = IdSet{};
    else
        shell::confine_unbound_tasks_to_allocation(*job, map->nodes[*node]);
    job->supervisor_fd = kSupervisorFd;
    // The tasks of other nodes are in other shells: the broker gathers
    // every node's barrier.
    job->pmi_through_supervisor = map->nodes.size() > 1;
    return shell::run(*job);
}

}  // namespace gantry::cli
