# shellcheck shell=bash
# What the benchmarks on the test hosts share (bench/run_hosts.sh,
# bench/compare_hosts.sh): the hosts are tests/cli/scripts/ssh_hosts.sh's,
# and its environment (GANTRY_TEST_*) says where they are.

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

# gantry_netns GANTRY N: `GANTRY run -H (the hosts) -n N true` through
# netns_agent.sh. No SSH_CONNECTION over there: the address the hosts reach
# is given.
gantry_netns() {
    "$1" run --launch-agent "$netns_agent" --overlay-address "$GANTRY_TEST_LOCAL_ADDRESS" \
        -H "$GANTRY_TEST_HOSTS" -n "$2" true
}
