#!/bin/bash
# gantry run across hosts over ssh, side by side with what it is measured
# against, on 4 hosts that sshd serves (tests/cli/scripts/ssh_hosts.sh:
# network namespaces on a bridge, reached from this machine):
#   - the floor: four `ssh HOST true` at once;
#   - `gantry run -H (the 4) -n N true`;
#   - MPICH's `mpiexec.hydra -launcher ssh -hosts (the 4) -n N true`;
#   - Open MPI's `mpirun --host (the 4) -n N true`, where it is installed;
# for N = 4, 64, 256 (N/4 tasks a host); the same at N = 4 with a launch
# agent that enters each host's namespace instead of ssh
# (lib/netns_agent.sh), which leaves what the launchers themselves cost;
# and an MPICH hello (the tests' mpi_probe: MPI_Init, an allreduce,
# MPI_Finalize) on the 4 hosts under gantry and under hydra, and under
# gantry with its tasks unbound (--bind-to none, as hydra leaves them): the
# 4 hosts share this machine's cores, and each binds its task to its core
# 0, the same core for all four; the unbound hello and hydra's without ssh
# too. With OLD_GANTRY, `OLD_GANTRY run -H (the 4) -n N true` and its
# hellos over ssh too, to compare two builds (a gantry-job-shell beside
# each). Everything alternates run by run, so that each sees the same
# machine. Prints the best and median wall time of each. Where the hosts
# cannot be made here, says why and exits 0.
# Usage: bench/run_hosts.sh path/to/gantry [RUNS [OLD_GANTRY]]
set -eu
usage="usage: bench/run_hosts.sh path/to/gantry [RUNS [OLD_GANTRY]]"
: "${1:?$usage}"
runs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/lib/hosts.sh
. "$here/lib/hosts.sh"
run_on_test_hosts "$here/run_hosts.sh" "$@"
# shellcheck source=bench/lib/timing.sh
. "$here/lib/timing.sh"
LABEL_WIDTH=40
gantry=$1
old_gantry=${3:-}
hosts=${GANTRY_TEST_HOSTS//,/ }
subnet="${GANTRY_TEST_LOCAL_ADDRESS%.*}.0/24"

# four_at_once AGENT: `AGENT HOST true` on the four hosts at once; fails if
# one does.
four_at_once() {
    local host pids=() status=0
    for host in $hosts; do
        "$1" "$host" true &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || status=1
    done
    return $status
}

# gantry_run N [BINARY], hydra N: over ssh; gantry_netns BINARY, hydra_netns:
# N = 4 through netns_agent.sh.
gantry_run() {
    gantry_on_hosts "$GANTRY_TEST_SSH" "${2:-$gantry}" "$1" --oversubscribe true
}
hydra() {
    hydra_on_hosts "$GANTRY_TEST_SSH" "$1" true
}
gantry_netns() {
    gantry_on_hosts "$netns_agent" "$1" 4 true
}
hydra_netns() {
    hydra_on_hosts "$netns_agent" 4 true
}

# Its daemons call back on the bridge's subnet. Bounded: Debian's Open MPI
# 4.1 can hang at N = 256 here, and is then timed no more. Its session
# directories (which a killed mpirun leaves) go in a directory of this
# script's, removed at the end.
ompi_tmp=$(mktemp -d)
trap 'rm -rf "$ompi_tmp"' EXIT
ompi() {
    timeout 30 mpirun.openmpi --allow-run-as-root --mca orte_tmpdir_base "$ompi_tmp" \
        --mca plm_rsh_agent "$GANTRY_TEST_SSH" \
        --mca oob_tcp_if_include "$subnet" --host "$GANTRY_TEST_HOSTS" --oversubscribe \
        -n "$1" true
}
# The tests' MPICH program, built beside gantry.
probe=$(dirname "$gantry")/tests/mpi_probe
# hello_gantry AGENT GANTRY [OPTION...], hello_hydra AGENT
hello_gantry() {
    local agent=$1 binary=$2
    shift 2
    gantry_on_hosts "$agent" "$binary" 4 "$@" "$probe"
}
hello_hydra() {
    hydra_on_hosts "$1" 4 "$probe"
}
have_ompi=$(command -v mpirun.openmpi > /dev/null && echo yes || echo no)

declare -A times hung
sizes="4 64 256"
for ((i = 0; i < runs; i++)); do
    times[floor]="${times[floor]:-} $(wall_ms four_at_once "$GANTRY_TEST_SSH")"
    times[agents]="${times[agents]:-} $(wall_ms four_at_once "$netns_agent")"
    times[gantry_netns]="${times[gantry_netns]:-} $(wall_ms gantry_netns "$gantry")"
    if [ -n "$old_gantry" ]; then
        times[old_netns]="${times[old_netns]:-} $(wall_ms gantry_netns "$old_gantry")"
    fi
    times[hydra_netns]="${times[hydra_netns]:-} $(wall_ms hydra_netns)"
    if [ -x "$probe" ]; then
        ssh=$GANTRY_TEST_SSH
        times[hello_gantry]="${times[hello_gantry]:-} $(wall_ms hello_gantry "$ssh" "$gantry")"
        times[hello_hydra]="${times[hello_hydra]:-} $(wall_ms hello_hydra "$ssh")"
        times[hello_unbound]="${times[hello_unbound]:-} $(wall_ms hello_gantry "$ssh" "$gantry" \
            --bind-to none)"
        if [ -n "$old_gantry" ]; then
            times[old_hello]="${times[old_hello]:-} $(wall_ms hello_gantry "$ssh" "$old_gantry")"
            times[old_hello_unbound]="${times[old_hello_unbound]:-} $(wall_ms hello_gantry \
                "$ssh" "$old_gantry" --bind-to none)"
        fi
        times[hello_netns]="${times[hello_netns]:-} $(wall_ms hello_gantry "$netns_agent" \
            "$gantry" --bind-to none)"
        times[hello_hydra_netns]="${times[hello_hydra_netns]:-} $(wall_ms hello_hydra \
            "$netns_agent")"
    fi
    for n in $sizes; do
        times[gantry$n]="${times[gantry$n]:-} $(wall_ms gantry_run "$n")"
        if [ -n "$old_gantry" ]; then
            times[old$n]="${times[old$n]:-} $(wall_ms gantry_run "$n" "$old_gantry")"
        fi
        times[hydra$n]="${times[hydra$n]:-} $(wall_ms hydra "$n")"
        if [ "$have_ompi" = yes ] && [ -z "${hung[$n]:-}" ]; then
            start=$(date +%s%N)
            if ompi "$n" > /dev/null 2>&1; then
                times[ompi$n]="${times[ompi$n]:-} $((($(date +%s%N) - start) / 1000))"
            else
                hung[$n]=yes
            fi
        fi
    done
done
echo "== 4 hosts over ssh ($runs runs each)"
# shellcheck disable=SC2086 # one word per run
summary "4 x ssh HOST true, at once" ${times[floor]}
for n in $sizes; do
    # shellcheck disable=SC2086
    summary "gantry run -H -n $n" ${times[gantry$n]}
    if [ -n "$old_gantry" ]; then
        # shellcheck disable=SC2086
        summary "OLD_GANTRY run -H -n $n" ${times[old$n]}
    fi
    # shellcheck disable=SC2086
    summary "mpiexec.hydra -launcher ssh -n $n" ${times[hydra$n]}
    if [ -n "${hung[$n]:-}" ]; then
        printf '%-*s did not end within 30 s (killed)\n' "$LABEL_WIDTH" \
            "mpirun (Open MPI) --host -n $n"
    elif [ "$have_ompi" = yes ]; then
        # shellcheck disable=SC2086
        summary "mpirun (Open MPI) --host -n $n" ${times[ompi$n]}
    fi
done
echo "== the same 4 hosts, the agent entering their namespaces (no ssh)"
# shellcheck disable=SC2086
summary "4 x agent HOST true, at once" ${times[agents]}
# shellcheck disable=SC2086
summary "gantry run -H -n 4" ${times[gantry_netns]}
if [ -n "$old_gantry" ]; then
    # shellcheck disable=SC2086
    summary "OLD_GANTRY run -H -n 4" ${times[old_netns]}
fi
# shellcheck disable=SC2086
summary "mpiexec.hydra -n 4" ${times[hydra_netns]}
if [ -x "$probe" ]; then
    # shellcheck disable=SC2086
    summary "MPICH hello -n 4: gantry --bind-to none" ${times[hello_netns]}
    # shellcheck disable=SC2086
    summary "MPICH hello -n 4: mpiexec.hydra" ${times[hello_hydra_netns]}
    echo "== an MPICH hello on the 4 hosts over ssh"
    # shellcheck disable=SC2086
    summary "MPICH hello -n 4: gantry run -H" ${times[hello_gantry]}
    if [ -n "$old_gantry" ]; then
        # shellcheck disable=SC2086
        summary "MPICH hello -n 4: OLD_GANTRY run -H" ${times[old_hello]}
    fi
    # shellcheck disable=SC2086
    summary "MPICH hello -n 4: mpiexec.hydra" ${times[hello_hydra]}
    # shellcheck disable=SC2086
    summary "MPICH hello -n 4: gantry --bind-to none" ${times[hello_unbound]}
    if [ -n "$old_gantry" ]; then
        # shellcheck disable=SC2086
        summary "MPICH hello -n 4: OLD_GANTRY unbound" ${times[old_hello_unbound]}
    fi
else
    echo "($probe is not built: the MPICH hello is not timed)"
fi
[ "$have_ompi" = yes ] || echo "(Open MPI's mpirun.openmpi is not installed: not timed)"
