#!/bin/bash
# Output across hosts: 100 MB of 80-byte lines, 25 MB from a task on each
# of the 4 hosts of tests/cli/scripts/ssh_hosts.sh, into /dev/null, under
# `gantry run -H (the 4) -n 4` and under MPICH's `mpiexec.hydra -hosts
# (the 4) -n 4`, over ssh and through a launch agent that enters each
# host's namespace instead (lib/netns_agent.sh). The launch is included
# (bench/run_hosts.sh times it alone). With OLD_GANTRY, the same under it.
# Runs alternate. Prints the best and median wall time of each. Where the
# hosts cannot be made here, says why and exits 0.
# Usage: bench/io_hosts.sh path/to/gantry [RUNS [OLD_GANTRY]]
set -eu
usage="usage: bench/io_hosts.sh path/to/gantry [RUNS [OLD_GANTRY]]"
: "${1:?$usage}"
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/lib/hosts.sh
. "$here/lib/hosts.sh"
run_on_test_hosts "$here/io_hosts.sh" "$@"
# shellcheck source=bench/lib/timing.sh
. "$here/lib/timing.sh"
LABEL_WIDTH=44
gantry=$1
runs=${2:-5}
old_gantry=${3:-}
writer="$(dirname "$gantry")/bench/line_writer"
each=25000000

# gantry_output AGENT [BINARY], hydra_output AGENT
gantry_output() {
    gantry_on_hosts "$1" "${2:-$gantry}" 4 "$writer" "$each"
}
hydra_output() {
    hydra_on_hosts "$1" 4 "$writer" "$each"
}

declare -A times
for ((i = 0; i < runs; i++)); do
    for agent in netns ssh; do
        command=$netns_agent
        [ "$agent" = ssh ] && command=$GANTRY_TEST_SSH
        times[gantry_$agent]="${times[gantry_$agent]:-} $(wall_ms gantry_output "$command")"
        if [ -n "$old_gantry" ]; then
            times[old_$agent]="${times[old_$agent]:-} $(wall_ms gantry_output "$command" \
                "$old_gantry")"
        fi
        times[hydra_$agent]="${times[hydra_$agent]:-} $(wall_ms hydra_output "$command")"
    done
done
for agent in netns ssh; do
    if [ "$agent" = netns ]; then
        echo "== 100 MB from 4 hosts, the agent entering their namespaces ($runs runs each)"
    else
        echo "== 100 MB from 4 hosts over ssh ($runs runs each)"
    fi
    # shellcheck disable=SC2086 # one word per run
    summary "gantry run -H -n 4 line_writer" ${times[gantry_$agent]}
    if [ -n "$old_gantry" ]; then
        # shellcheck disable=SC2086
        summary "OLD_GANTRY run -H -n 4 line_writer" ${times[old_$agent]}
    fi
    # shellcheck disable=SC2086
    summary "mpiexec.hydra -n 4 line_writer" ${times[hydra_$agent]}
done
