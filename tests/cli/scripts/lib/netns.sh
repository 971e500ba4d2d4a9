# shellcheck shell=bash
# Hosts made of network namespaces, for the test scripts that need several
# hosts on this machine (netns_hosts.sh, ssh_hosts.sh source this file).
# The hosts' links meet on a bridge that lives in a namespace of its own
# (the hub), so that making them touches nothing of this machine's network;
# each host runs its programs under its own host name (a UTS namespace).

# netns_hub HUB: the namespace HUB with the bridge br0, up. On failure
# (namespaces cannot be made here), says why on stderr and returns non-zero.
netns_hub() {
    ip netns add "$1" || return 1
    ip -n "$1" link add br0 type bridge && ip -n "$1" link set br0 up
}

# netns_host HUB NS LINK ADDRESS/PREFIX: the namespace NS, whose link LINK
# (one end of a veth pair; the other end is a port of HUB's bridge, named
# after LINK) has ADDRESS, and whose loopback is up.
netns_host() {
    local hub=$1 ns=$2 link=$3 address=$4
    ip netns add "$ns" &&
        ip link add "$link" netns "$ns" type veth peer name "p$link" netns "$hub" &&
        ip -n "$hub" link set "p$link" master br0 up &&
        ip -n "$ns" link set lo up &&
        ip -n "$ns" addr add "$address" dev "$link" &&
        ip -n "$ns" link set "$link" up
}

# netns_exec NS NAME COMMAND...: COMMAND in the namespace NS under the host
# name NAME. Replaces the calling shell, so that the $! of a background
# `netns_exec ... &` is COMMAND itself.
netns_exec() {
    local ns=$1 name=$2
    shift 2
    # shellcheck disable=SC2016 # expanded by that sh, not by this shell
    exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$name" "$@"
}

# netns_remove NS...: kills every process still in each namespace (a daemon
# and whatever it started: the namespace's own list, not a list kept by the
# caller, so that nothing outlives its host), waits until they are gone
# (2 s at most), then deletes the namespace. A namespace that is not there
# is passed over.
netns_remove() {
    local ns pids
    for ns in "$@"; do
        for _ in $(seq 100); do
            pids=$(ip netns pids "$ns" 2>/dev/null)
            [ -z "$pids" ] && break
            # shellcheck disable=SC2086 # one word per process
            kill -9 $pids 2>/dev/null
            sleep 0.02
        done
        ip netns del "$ns" 2>/dev/null
    done
    return 0
}
