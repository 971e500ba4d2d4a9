#!/bin/bash
# The floor of launching on other hosts over ssh, which `gantry run -H` is
# to be measured against: on 4 hosts that sshd serves
# (tests/cli/scripts/ssh_hosts.sh: network namespaces on a bridge, reached
# from this machine), four `ssh HOST true` at once, and MPICH's
# `mpiexec.hydra -launcher ssh -hosts (the 4) -n N true` for N = 4, 64, 256
# (one proxy a host, N/4 tasks each). All four alternate run by run, so
# that they see the same machine. Prints the best and median wall time of
# each. Where the hosts cannot be made here, says why and exits 0.
# Usage: bench/ssh_floor.sh path/to/gantry [RUNS]
# (gantry is taken as the other scripts take it, so that `make bench`
# runs this one alike; nothing here runs it until it launches over ssh.)
set -eu
usage="usage: bench/ssh_floor.sh path/to/gantry [RUNS]"
: "${1:?$usage}"
runs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)

# On the hosts, this script runs again as the hosts script's COMMAND.
if [ -z "${GANTRY_TEST_SSH:-}" ]; then
    status=0
    "$here/../tests/cli/scripts/ssh_hosts.sh" 4 "$here/ssh_floor.sh" "$@" || status=$?
    [ "$status" = 77 ] && exit 0
    exit "$status"
fi

# shellcheck source=bench/lib/timing.sh
. "$here/lib/timing.sh"
LABEL_WIDTH=36
hosts=${GANTRY_TEST_HOSTS//,/ }

# Four ssh at once, one a host; fails if one does.
four_ssh() {
    local host pids=() status=0
    for host in $hosts; do
        "$GANTRY_TEST_SSH" "$host" true &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || status=1
    done
    return $status
}

# -localhost: the hosts reach this machine at its address on their bridge.
hydra() {
    mpiexec.hydra -launcher ssh -launcher-exec "$GANTRY_TEST_SSH" \
        -localhost "$GANTRY_TEST_LOCAL_ADDRESS" -hosts "$GANTRY_TEST_HOSTS" -n "$1" true
}

floor="" n4="" n64="" n256=""
for ((i = 0; i < runs; i++)); do
    floor="$floor $(wall_ms four_ssh)"
    n4="$n4 $(wall_ms hydra 4)"
    n64="$n64 $(wall_ms hydra 64)"
    n256="$n256 $(wall_ms hydra 256)"
done
echo "== 4 hosts over ssh ($runs runs each)"
# shellcheck disable=SC2086 # one word per run
summary "4 x ssh HOST true, at once" $floor
# shellcheck disable=SC2086
summary "mpiexec.hydra -launcher ssh -n 4" $n4
# shellcheck disable=SC2086
summary "mpiexec.hydra -launcher ssh -n 64" $n64
# shellcheck disable=SC2086
summary "mpiexec.hydra -launcher ssh -n 256" $n256
