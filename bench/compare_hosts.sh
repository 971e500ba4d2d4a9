#!/bin/bash
# Two builds of gantry side by side on the 4 hosts of run_hosts.sh
# (tests/cli/scripts/ssh_hosts.sh), run by run in turn so that both see the
# same machine: `BUILD run -H (the 4) -n 4 true`, first with the launch
# agent that enters each host's namespace (lib/netns_agent.sh: what gantry
# itself costs), then over ssh. Prints the best and median wall time of
# each. A difference of a few ms needs many runs on a machine whose hosts
# share its cores: 40 is the default. Each build needs its gantry-job-shell
# beside it. Where the hosts cannot be made here, says why and exits 0.
# Usage: bench/compare_hosts.sh OLD/gantry NEW/gantry [RUNS]
# With one build (as `make bench` runs every script), says there is nothing
# to compare and exits 0.
set -eu
usage="usage: bench/compare_hosts.sh OLD/gantry NEW/gantry [RUNS]"
: "${1:?$usage}"
if [ $# -lt 2 ]; then
    echo "bench/compare_hosts.sh: one build given, none to compare it with ($usage)"
    exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/lib/hosts.sh
. "$here/lib/hosts.sh"
run_on_test_hosts "$here/compare_hosts.sh" "$@"
# shellcheck source=bench/lib/timing.sh
. "$here/lib/timing.sh"
LABEL_WIDTH=40
old=$1
new=$2
runs=${3:-40}

netns() {
    gantry_on_hosts "$netns_agent" "$1" 4 true
}
over_ssh() {
    gantry_on_hosts "$GANTRY_TEST_SSH" "$1" 4 true
}

for kind in netns over_ssh; do
    old_times="" new_times=""
    for ((i = 0; i < runs; i++)); do
        old_times="$old_times $(wall_ms "$kind" "$old")"
        new_times="$new_times $(wall_ms "$kind" "$new")"
    done
    echo "== $kind ($runs runs each, in turn)"
    # shellcheck disable=SC2086 # one word per run
    summary "OLD $old" $old_times
    # shellcheck disable=SC2086
    summary "NEW $new" $new_times
done
