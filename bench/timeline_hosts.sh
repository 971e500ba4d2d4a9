#!/bin/bash
# Where the time of one launch across hosts goes: `gantry run -H (the 4
# hosts of tests/cli/scripts/ssh_hosts.sh) -n 4 true`, through the agent
# that enters their namespaces (lib/netns_agent.sh), or over ssh with
# --ssh, traced with uprobes on gantry's milestones (perf probe) and the
# scheduler's exec events (perf record -a). Prints, for each of RUNS runs,
# each milestone in the order reached: ms from rank 0's exec, the process,
# the milestone. Needs perf and root; removes the probes it adds, however
# it ends. Where the hosts cannot be made here, says why and exits 0.
# Usage: bench/timeline_hosts.sh path/to/gantry [RUNS [--ssh]]
set -eu
usage="usage: bench/timeline_hosts.sh path/to/gantry [RUNS [--ssh]]"
: "${1:?$usage}"
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/lib/hosts.sh
. "$here/lib/hosts.sh"
run_on_test_hosts "$here/timeline_hosts.sh" "$@"
gantry=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shell="$(dirname "$gantry")/gantry-job-shell"
runs=${2:-3}
over_ssh=${3:-}
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

agent=$netns_agent
reach=(--overlay-address "$GANTRY_TEST_LOCAL_ADDRESS")
if [ "$over_ssh" = --ssh ]; then
    agent=$GANTRY_TEST_SSH
    reach=()
fi
for ((i = 1; i <= runs; i++)); do
    perf record -q -o "$work/run.data" -a -e 'gantry_timeline:*' \
        -e sched:sched_process_exec -- \
        "$gantry" run --launch-agent "$agent" "${reach[@]}" -H "$GANTRY_TEST_HOSTS" -n 4 true \
        > /dev/null 2>&1
    echo "== run $i"
    # Milestones, and the execs of gantry, its shells and the tasks.
    perf script -i "$work/run.data" -F comm,pid,time,event,trace 2> /dev/null |
        awk '/sched_process_exec/ && $0 !~ /filename=[^ ]*\/(gantry|gantry-job-shell|true) / { next }
             { sub(":$", "", $3); if (t0 == "") t0 = $3
               event = $4; sub(":$", "", event); sub(".*:", "", event)
               if (event == "sched_process_exec") event = "exec " $1
               printf "%8.2f ms  %-16s %-6s %s\n", ($3 - t0) * 1000, $1, $2, event }'
done
