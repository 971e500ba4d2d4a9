# shellcheck shell=bash
# What the benchmarks on the test hosts share (bench/*_hosts.sh): the hosts
# are tests/cli/scripts/ssh_hosts.sh's, and its environment (GANTRY_TEST_*)
# says where they are.

bench_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# run_on_test_hosts SCRIPT ARGS...: unless this already runs on the test
# hosts, runs SCRIPT ARGS... again as the COMMAND of ssh_hosts.sh with 4
# hosts, and exits with its exit code (0 where the hosts cannot be made
# here: ssh_hosts.sh says why).
run_on_test_hosts() {
    [ -n "${GANTRY_TEST_SSH:-}" ] && return 0
    local status=0
    "$bench_lib/../../tests/cli/scripts/ssh_hosts.sh" 4 "$@" || status=$?
    [ "$status" = 77 ] && exit 0
    exit "$status"
}

# The launch agent without ssh (netns_agent.sh).
netns_agent="$bench_lib/netns_agent.sh"

# gantry_on_hosts AGENT GANTRY N [OPTION...] COMMAND...: `GANTRY run -H
# (the hosts) -n N ...` through the launch agent AGENT ($GANTRY_TEST_SSH or
# $netns_agent). netns_agent.sh sets no SSH_CONNECTION over there: with it,
# the address the hosts reach is given.
gantry_on_hosts() {
    local agent=$1 gantry=$2 n=$3 reach=()
    shift 3
    [ "$agent" = "$netns_agent" ] && reach=(--overlay-address "$GANTRY_TEST_LOCAL_ADDRESS")
    "$gantry" run --launch-agent "$agent" "${reach[@]}" -H "$GANTRY_TEST_HOSTS" -n "$n" "$@"
}

# hydra_on_hosts AGENT N COMMAND...: MPICH's `mpiexec.hydra -hosts (the
# hosts) -n N COMMAND...` through AGENT. -localhost: the hosts reach this
# machine at its address on their bridge.
hydra_on_hosts() {
    local agent=$1 n=$2
    shift 2
    mpiexec.hydra -launcher ssh -launcher-exec "$agent" -localhost "$GANTRY_TEST_LOCAL_ADDRESS" \
        -hosts "$GANTRY_TEST_HOSTS" -n "$n" "$@"
}
