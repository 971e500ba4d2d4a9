#!/bin/bash
# Where the time of one launch across hosts goes: `gantry run -H (the 4
# hosts of tests/cli/scripts/ssh_hosts.sh) -n 4 true`, through the agent
# that enters their namespaces (lib/netns_agent.sh), or over ssh with
# --ssh, traced with uprobes on gantry's milestones (perf probe) and the
# scheduler's exec and exit events (perf record -a); with --hydra, MPICH's
# `mpiexec.hydra` over the same hosts instead, traced by the scheduler's
# events alone; with --hello, the tests' MPICH hello (tests/mpi_probe
# beside gantry) instead of true, unbound under gantry as hydra leaves it.
# Prints, for each of RUNS runs, each milestone in the order reached: ms
# from the first, the process, the milestone (an exit of a thread, too,
# under its process's name). Needs perf and root; removes the probes it
# adds, however it ends. Where the hosts cannot be made here, says why and
# exits 0.
# Usage: bench/timeline_hosts.sh path/to/gantry [RUNS [--ssh] [--hydra] [--hello]]
set -eu
usage="usage: bench/timeline_hosts.sh path/to/gantry [RUNS [--ssh] [--hydra] [--hello]]"
: "${1:?$usage}"
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/lib/hosts.sh
. "$here/lib/hosts.sh"
# What perf runs: `--launch LAUNCHER AGENT GANTRY PROGRAM`, the launch alone.
if [ "$1" = --launch ]; then
    if [ "$2" = hydra ]; then
        hydra_on_hosts "$3" 4 "$5"
    elif [ "$5" = true ]; then
        gantry_on_hosts "$3" "$4" 4 true
    else
        gantry_on_hosts "$3" "$4" 4 --bind-to none "$5"
    fi
    exit
fi
run_on_test_hosts "$here/timeline_hosts.sh" "$@"
gantry=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shell="$(dirname "$gantry")/gantry-job-shell"
runs=${2:-3}
over_ssh=
launcher=gantry
program=true
for option in "${@:3}"; do
    case $option in
    --ssh) over_ssh=1 ;;
    --hydra) launcher=hydra ;;
    --hello) program="$(dirname "$gantry")/tests/mpi_probe" ;;
    *)
        echo "$usage" >&2
        exit 2
        ;;
    esac
done
if [ ! -x "$program" ] && [ "$program" != true ]; then
    echo "bench/timeline_hosts.sh: $program is not built: nothing timed"
    exit 0
fi
if ! command -v perf > /dev/null; then
    echo "bench/timeline_hosts.sh: perf is not installed: nothing timed"
    exit 0
fi
work=$(mktemp -d)
trap 'perf probe -q -d "gantry_timeline:*" 2> /dev/null || true; rm -rf "$work"' EXIT

# probe BINARY NAME FUNCTION: a uprobe NAME at the entry of FUNCTION (its
# demangled name's start) in BINARY.
probe() {
    local symbol
    symbol=$(paste <(nm "$1") <(nm -C "$1") | awk -F'\t' -v f="$3" \
        '{ split($1, raw, " "); if ((raw[2] == "T" || raw[2] == "t") &&
           index($2, f) > 0 && substr($2, 20, length(f)) == f) { print raw[3]; exit } }')
    if [ -z "$symbol" ]; then
        echo "bench/timeline_hosts.sh: no $3 in $1" >&2
        exit 1
    fi
    if ! perf probe -q -x "$1" -a "gantry_timeline:$2=$symbol"; then
        echo "bench/timeline_hosts.sh: perf cannot place uprobes here: nothing timed"
        exit 0
    fi
}
# The milestones of gantry's processes.
probe_gantry() {
    probe "$gantry" agents_started "gantry::overlay::LaunchedHosts::start("
    probe "$gantry" rank0_loop "gantry::broker::Instance::run()"
    probe "$gantry" rank0_answers_a_broker "gantry::overlay::LaunchedHosts::write("
    probe "$gantry" broker_main "gantry::cli::start_main(int"
    probe "$gantry" broker_line_out "gantry::broker::Bootstrap::exchange_stream("
    probe "$gantry" broker_connects "gantry::overlay::Overlay::connect("
    probe "$gantry" a_broker_joined "gantry::broker::Instance::rank_joined("
    probe "$gantry" all_joined "gantry::broker::Instance::all_joined()"
    probe "$gantry" front_end_released "gantry::broker::Instance::start_prepared_program()"
    probe "$gantry" job_submitted "gantry::broker::JobManager::Impl::submit("
    probe "$gantry" job_exec "gantry::broker::JobManager::Impl::exec("
    probe "$gantry" front_end_attaches "gantry::cli::attach_job("
    probe "$shell" shell_main "gantry::cli::job_shell_main("
    probe "$shell" shell_runs_tasks "gantry::shell::run("
    probe "$gantry" a_shell_finished "gantry::broker::JobManager::Impl::on_finished("
    probe "$gantry" job_finished "gantry::broker::JobManager::Impl::finish("
    probe "$gantry" front_end_ended "gantry::broker::Instance::initial_program_ended("
    probe "$gantry" brokers_shut_down "gantry::broker::Instance::shut_down_brokers("
}
[ "$launcher" = gantry ] && probe_gantry

agent=$netns_agent
[ -n "$over_ssh" ] && agent=$GANTRY_TEST_SSH
for ((i = 1; i <= runs; i++)); do
    events=(-e sched:sched_process_exec -e sched:sched_process_exit)
    [ "$launcher" = gantry ] && events+=(-e 'gantry_timeline:*')
    # perf runs an executable: this script again, as the launch alone.
    perf record -q -o "$work/run.data" -a "${events[@]}" -- \
        "$0" --launch "$launcher" "$agent" "$gantry" "$program" > /dev/null 2>&1
    echo "== run $i"
    # Milestones, the execs of the launchers' processes and the tasks, and
    # the exits of those and of the ssh clients.
    perf script -i "$work/run.data" -F comm,pid,time,event,trace 2> /dev/null |
        awk '/sched_process_exec/ && $0 !~ /filename=[^ ]*\/(gantry|gantry-job-shell|mpiexec.hydra|hydra_pmi_proxy|true|mpi_probe) / { next }
             /sched_process_exit/ && $1 !~ /^(gantry|gantry-job-shel|mpiexec.hydra|hydra_pmi_proxy|true|mpi_probe|ssh)$/ { next }
             { sub(":$", "", $3); if (t0 == "") t0 = $3
               event = $4; sub(":$", "", event); sub(".*:", "", event)
               if (event == "sched_process_exec") event = "exec " $1
               if (event == "sched_process_exit") event = "exit " $1
               printf "%8.2f ms  %-16s %-6s %s\n", ($3 - t0) * 1000, $1, $2, event }'
done
