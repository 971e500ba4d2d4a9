// The command line of `gantry run` and `gantry submit`: job and app options
// before each command, apps separated by ':', all of it read into one
// Jobspec, the representation the mapper, the shell and an instance's
// broker work from (docs/jobspec.md says which option fills which key).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/jobspec.h"
#include "util/error.h"

namespace gantry::shell {
struct Job;
}

namespace gantry::cli {

struct RunCommand {
    Jobspec jobspec;       // every option of the command line
    bool dry_run = false;  // --dry-run / --do-not-launch / --runtime-options donotlaunch
    bool help = false;     // -h / --help: nothing else is checked beyond the options
    // The scheduling options given (-N, -c, -g, --exclusive, --urgency,
    // --begin-time, --dependency and their long spellings), as spelled, in
    // order: only an instance acts on them, so a front end without one
    // refuses them by name.
    std::vector<std::string> scheduling_options;
    std::optional<std::string> uri;  // --uri: the instance to submit to
    // How to reach other hosts (--launch-agent, --prefix, --launch-timeout),
    // as given, each option then its value: what `gantry start -H` is given
    // when the job names hosts other than this one.
    std::vector<std::string> launch_options;
    // What the front end says once on stderr before it goes on: options
    // accepted for other launchers' sake that gantry has no use for.
    std::vector<std::string> notes;
};

// The hosts of a Slurm allocation with their slots, as -H takes them
// ("n1:2,n2:2,n3:1"), from SLURM_JOB_NODELIST (a hostlist) and `per_node`,
// the value of `variable` (SLURM_TASKS_PER_NODE or SLURM_JOB_CPUS_PER_NODE:
// "2(x2),1", each count repeated as (xN) says). Errors name the variable
// and the place (`SLURM_TASKS_PER_NODE: expected a count at offset 2 in
// "2,"`), or counts that do not match the nodes.
Result<std::string> slurm_hosts(std::string_view nodelist, std::string_view per_node,
                                std::string_view variable = "SLURM_TASKS_PER_NODE");

// Reads argv (argv[0] is the subcommand's name) into a RunCommand. Every
// option has one entry in one table with all its spellings (gantry's own,
// mpirun's, MPICH's, srun's and flux's), read as `-n 2`, `-n2`, `-n=2` or
// `--np=2`; a flag given a value is refused; `--` ends the options of a
// segment. `command`
// is "run" or "submit": the domain of the messages and the command their
// hints name (`run: unknown option "--x" (see gantry run --help)`).
//
// Checked here, with one message each: the options and their values
// (policies, task counts, --display items, durations, scheduling values,
// --mpi, --requires), the segments' commands, and --resources, whose file is read now
// into resources.R. Carried as given and checked by the layers that use them:
// hosts and hostfiles, the topology, --input, --rlimit, --umask, env rules
// and --cwd (map_jobspec, shell::launch_settings). Relative paths are kept
// relative; those layers take them from attributes.cwd.
//
// Also filled: attributes.cwd (this process's directory),
// attributes.environment (its environment), attributes.name (--job-name,
// else the base name of app 0's program), and begin_time in seconds since
// the epoch (`--begin-time +5m` counts from now).
Result<RunCommand> parse_run_command(std::string_view command, int argc, char** argv);

// Prints each of run.notes on stderr, `gantry: ` first.
void print_notes(const RunCommand& run);

// Runs `run` on this machine, as `gantry run` does outside an instance, and
// returns its exit code; `adjust` may change the shell's job first.
int run_here(const RunCommand& run, const std::function<void(shell::Job&)>& adjust = {});

// An urgency as a user writes it (--urgency, `gantry urgency`): 0-31, or
// hold (0), default (16) or expedite (31) as Flux names them; nullopt for
// anything else.
std::optional<int> urgency_of(std::string_view text);

// --requires QUERY (docs/formats/constraint.md) compiled and added to
// `constraint`, the jobspec's: several --requires must all hold.
// `run: --requires: constraint: ... at offset 2 in "a |"` when it is no query.
Status add_requirement(std::string_view domain, Json& constraint, std::string_view query);
// The help of run, submit, alloc and urgency (and docs/) spell these numbers
// out; this fails the build if Jobspec's constants change without them.
static_assert(Jobspec::kUrgencyHold == 0 && Jobspec::kUrgencyDefault == 16 &&
              Jobspec::kUrgencyExpedite == 31);

}  // namespace gantry::cli
