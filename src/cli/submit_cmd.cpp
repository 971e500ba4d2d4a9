// `gantry submit`: the command line of `gantry run` as a jobspec, queued in
// an instance; prints the job's id. Reference: docs/commands/submit.md.
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kUsage =
    R"(Usage: gantry submit [--uri URI] [OPTIONS] CMD [ARGS] [: [APP OPTIONS] CMD [ARGS]]...

Queues a job in an instance and prints its id. The instance runs it once it
has the resources, maps and launches it as gantry run would, and keeps its
output: gantry attach ID prints it, gantry wait ID waits for its end.

Instance options:
  --uri URI              the instance (default: $GANTRY_URI)
  -N, --nodes N          nodes to allocate (default: as many as the tasks need)
  -c, --cores-per-task N cores of each task's slot (default 1)
  -g, --gpus-per-task N  GPUs of each task's slot (default 0)
  --exclusive            allocate whole nodes
  --requires QUERY       only nodes that satisfy QUERY: properties (gpu, -big),
                         host:HOSTS, rank:IDS, with and, or, not, ( )
  --job-name NAME        the job's name (default: its first program's)
  --urgency N            0 (hold) to 31 (expedite), or hold/default/expedite; default 16
  --begin-time WHEN      not before +DURATION from now (+10m) or seconds since
                         the epoch
  --dependency TYPE:ID   start after job ID: afterok, afterany or afternotok;
                         comma-separated or repeated
  --resources R.json     run on exactly these resources of the instance
  -t, --time-limit DUR   SIGTERM every task after DUR (30s, 5m, 1h), then SIGKILL
  --dry-run              print the jobspec instead of submitting it

Every option of gantry run maps and launches the job as it does there: -n,
--map-by, --rank-by, --bind-to, --env, --cwd, --label-io, --output, --input,
--kill-on-bad-exit... and ':' between the apps of an MPMD program; see
gantry run --help.

Examples:
  $ gantry submit -n 2 --label-io hostname
  1
  $ gantry attach 1 | sort
  0: <host>
  1: <host>
  $ gantry submit -N 1 --exclusive --time-limit 1h ./mpi_app
  $ gantry submit --dependency afterok:1 --urgency 31 ./solver
  $ gantry submit -n 1 ./solver : -n 1 ./monitor
  $ gantry submit --dry-run -n 2 hostname | jq .resources
  $ gantry submit --dry-run --requires 'gpu,-slow | host:node[1-4]' ./a | jq -c .resources.constraint
  {"or":[{"properties":["gpu","^slow"]},{"hostlist":["node[1-4]"]}]}

Exit status: 0 once the job is queued; 1 when the instance cannot be reached
or refuses the job (gantry: job.submit: ...); 2 on bad options, or when
there is no GANTRY_URI and no --uri.)";

}  // namespace

int submit_main(int argc, char** argv) {
    const auto command = parse_run_command("submit", argc, argv);
    if (!command)
        return fail(command.error());
    print_notes(*command);
    if (command->help) {
        std::cout << kUsage << '\n';
        return kExitOk;
    }
    if (command->dry_run) {
        std::cout << command->jobspec.encode() << '\n';
        return kExitOk;
    }

    if (auto fits = check_for_instance(command->jobspec, "job.submit"); !fits)
        return runtime_failure(fits.error());
    int exit_code = kExitOk;
    auto client = connect_instance(command->uri, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("job.submit", {{"jobspec", command->jobspec.to_json()}});
    if (!reply)
        return runtime_failure(reply.error());
    std::cout << number_text(*reply, "id") << '\n' << std::flush;
    return kExitOk;
}

}  // namespace gantry::cli
