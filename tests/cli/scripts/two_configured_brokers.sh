#!/bin/bash
# Two brokers of a configured instance on this host, posing as hosts ha and
# hb (UTS namespaces of their own) at 127.0.0.1 and 127.0.0.2: rank 0 in
# the background, then rank 1 in the foreground, as CASE says; then rank 0
# gets SIGTERM. Prints the exit codes of those in the foreground and of rank
# 0, then rank 0's stderr (the others' comes as it is written). 77 (and why) where UTS
# namespaces cannot be made. Everything made is removed on the way out.
#
# Usage: two_configured_brokers.sh GANTRY PORT CASE
#   CASE  other-certificate: rank 1 reads another instance's certificate
#         same-rank: a second broker on hb, while the first is up
set -u
gantry=$1 port=$2 case=$3
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill -9 "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

if ! unshare --uts true 2>"$work/err"; then
    echo "SKIP: cannot make UTS namespaces here: $(cat "$work/err")"
    exit 77
fi
for name in a b; do
    "$gantry" keygen "$work/$name.cert" || exit 1
    printf '{"hosts": "ha,hb", "addresses": ["127.0.0.1", "127.0.0.2"], "port": %d, "certificate": "%s"}\n' \
        "$port" "$work/$name.cert" >"$work/$name.json"
done

# as HOST CONFIG [CMD...]: `gantry start --config CONFIG CMD...` posing as HOST.
as() {
    local host=$1 config=$2
    shift 2
    exec unshare --uts sh -c 'hostname "$0"; exec "$@"' "$host" \
        "$gantry" start --config "$work/$config.json" "$@"
}

# Rank 0's initial program runs once every rank has joined.
as ha a sh -c 'touch "$0"; exec sleep 30' "$work/joined" 2>"$work/rank0.err" &
rank0=$!
pids+=("$rank0")
case $case in
other-certificate)
    (as hb b)
    echo "rank 1: $?"
    ;;
same-rank)
    as hb a &
    first=$!
    pids+=("$first")
    until [ -e "$work/joined" ]; do sleep 0.02; done
    (as hb a)
    echo "second rank 1: $?"
    ;;
esac
if kill -0 "$rank0" 2>/dev/null; then
    kill -TERM "$rank0"
    wait "$rank0"
    echo "rank 0: $?"
fi
# The first broker of rank 1 ends with its instance.
if [ "$case" = same-rank ]; then
    wait "$first"
    echo "first rank 1: $?"
fi
cat "$work/rank0.err" >&2
