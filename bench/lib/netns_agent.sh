#!/bin/bash
# A launch agent without ssh, for measuring what a launcher itself costs on
# the hosts of tests/cli/scripts/ssh_hosts.sh: `netns_agent.sh [-OPTION...]
# HOST COMMAND-LINE` runs COMMAND-LINE with sh -c in HOST's network
# namespace, as sshd would run it there. Options (hydra passes -x, as to
# ssh) are ignored. Needs GANTRY_TEST_HOSTS and GANTRY_TEST_NETNS.
set -eu
while [[ ${1:-} == -* ]]; do
    shift
done
host=$1
shift
read -r -a hosts <<< "${GANTRY_TEST_HOSTS//,/ }"
read -r -a namespaces <<< "$GANTRY_TEST_NETNS"
for i in "${!hosts[@]}"; do
    if [ "${hosts[$i]}" = "$host" ]; then
        exec ip netns exec "${namespaces[$i]}" sh -c "$*"
    fi
done
echo "netns_agent.sh: no host $host" >&2
exit 255
