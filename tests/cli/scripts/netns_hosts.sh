#!/bin/bash
# Three hosts made of network namespaces: each its own network stack and
# address on a bridge (in a namespace of its own, so that this host's
# network is never touched), and its own host name (a UTS namespace). One
# gantry broker per host, configured by one file (`gantry start --config`);
# rank 0 runs COMMAND... as the initial program. Prints what COMMAND prints
# and exits with its exit code; 77 (and a line saying why) when namespaces
# cannot be made here. Everything made is removed on the way out, whatever
# happens.
#
# COMMAND runs with GANTRY_TEST_NETNS (the three namespaces, in host order),
# GANTRY_TEST_LINKS (each host's link to the bridge, in its namespace),
# GANTRY_TEST_CONFIG (the configuration) and GANTRY_TEST_PIDS (a directory
# where hostI.pid holds the broker of host I, for I > 0) in its environment,
# so that it can kill a broker and start it again. GANTRY_TEST_START_OPTIONS
# are given to every `gantry start`; GANTRY_TEST_PROPERTIES, a JSON
# object, is the configuration's "properties".
#
# With GANTRY_TEST_RANK0=daemon, rank 0 runs as a daemon with a state
# directory (GANTRY_TEST_STATE), and COMMAND runs beside it with GANTRY_URI
# set, so that it can kill rank 0 and start it again; the script's exit code
# is COMMAND's.
#
# With GANTRY_TEST_BOOTSTRAP=hydra, MPICH's mpiexec.hydra starts the three
# brokers instead (from host 0, reaching the others through a launch agent
# that enters their namespaces), and they bootstrap by its PMI.
# Usage: netns_hosts.sh GANTRY COMMAND...
set -u
# shellcheck source=tests/cli/scripts/lib/netns.sh
. "$(dirname "$0")/lib/netns.sh"
gantry=$1
shift
tag="gt$$"
hub="$tag-hub"
hosts=("$tag-0" "$tag-1" "$tag-2")
work=$(mktemp -d)
pids=()

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    for pid in "${pids[@]}"; do
        kill -9 "$pid" 2>/dev/null
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null
    done
    netns_remove "${hosts[@]}" "$hub"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

if ! netns_hub "$hub" 2>"$work/err"; then
    echo "SKIP: cannot make network namespaces here: $(cat "$work/err")"
    exit 77
fi
addresses=()
for i in 0 1 2; do
    netns_host "$hub" "${hosts[$i]}" "v$tag$i" "10.213.7.$((i + 1))/24" || exit 1
    addresses+=("\"10.213.7.$((i + 1))\"")
done

"$gantry" keygen "$work/curve.cert" || exit 1
cat > "$work/instance.json" <<JSON
{"hosts": "host[0-2]", "addresses": [${addresses[0]}, ${addresses[1]}, ${addresses[2]}],
 "port": 8050, "certificate": "$work/curve.cert", "properties": ${GANTRY_TEST_PROPERTIES:-{\}}}
JSON

# on_host I COMMAND...: COMMAND on host I, under its own host name (in
# place of the shell: a background on_host's $! is the broker itself).
on_host() {
    local i=$1
    shift
    netns_exec "${hosts[$i]}" "host$i" "$@"
}

if [ "${GANTRY_TEST_BOOTSTRAP:-}" = hydra ]; then
    # hydra's launch agent, called as ssh is (options, HOST, then the
    # command as words of one remote shell line).
    cat > "$work/to_host" <<SCRIPT
#!/bin/bash
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1
shift
namespaces=(${hosts[*]})
exec ip netns exec "\${namespaces[\${host#host}]}" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$*"' "\$host" "\$@"
SCRIPT
    chmod +x "$work/to_host"
    # shellcheck disable=SC2206 # options are words
    options=(${GANTRY_TEST_START_OPTIONS:-})
    on_host 0 mpiexec.hydra -launcher ssh -launcher-exec "$work/to_host" -localhost 10.213.7.1 \
        -hosts host0,host1,host2 -n 3 "$gantry" start "${options[@]}" "$@" &
    pids+=($!)
    wait $!
    status=$?
    pids=()
    exit $status
fi

# shellcheck disable=SC2206 # options are words
options=(--config "$work/instance.json" ${GANTRY_TEST_START_OPTIONS:-})
for i in 1 2; do
    on_host $i "$gantry" start "${options[@]}" 2>"$work/host$i.err" &
    pids+=($!)
    echo $! > "$work/host$i.pid"
done
export GANTRY_TEST_NETNS="${hosts[*]}" GANTRY_TEST_CONFIG="$work/instance.json"
export GANTRY_TEST_PIDS="$work" GANTRY_TEST_LINKS="v${tag}0 v${tag}1 v${tag}2"
# The shell's own notices of a broker the test killed are not the
# instance's stderr.
exec 3>&2 2>/dev/null
if [ "${GANTRY_TEST_RANK0:-}" = daemon ]; then
    export GANTRY_TEST_STATE="$work/state"
    # The daemon leaves this shell at once: what is left of it in host 0's
    # namespace when COMMAND ends, netns_remove ends.
    GANTRY_URI=$( (on_host 0 "$gantry" start "${options[@]}" --daemon --state-dir "$work/state") 2>&3) ||
        exit 1
    export GANTRY_URI
    "$@" 2>&3
    status=$?
    "$gantry" shutdown 2>/dev/null
    exit $status
fi
(on_host 0 "$gantry" start "${options[@]}" "$@" 2>&3)
status=$?
# The other brokers end with rank 0's instance.
for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || [ -n "${GANTRY_TEST_KILLS:-}" ] ||
        echo "broker $pid exited $?: $(cat "$work"/host*.err)"
done
pids=()
exit $status
