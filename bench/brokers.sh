#!/bin/sh
# An instance of many brokers on this host: `gantry start --test-size=N true`
# from start to the end of every broker, for N = 4, 16, 64 (and 256 with
# ALL=1), against `flux start --test-size=N true` where flux is on the PATH;
# then a job across 16 brokers against the same job in a one-broker instance:
# `gantry run -N 16 -n 256 true` inside `--test-size=16` and `gantry run -n
# 256 true` inside a plain `gantry start`. Prints the best and median wall
# time of each, and the largest resident set of one idle broker (rank 1) of
# a 16-broker instance.
# Usage: bench/brokers.sh path/to/gantry [RUNS]
set -eu
gantry=${1:?usage: bench/brokers.sh path/to/gantry [RUNS]}
runs=${2:-10}
flux=$(command -v flux || true)
sizes="4 16 64"
[ "${ALL:-0}" = 1 ] && sizes="$sizes 256"

# shellcheck source=bench/lib/timing.sh
. "$(dirname "$0")/lib/timing.sh"
LABEL_WIDTH=28

for n in $sizes; do
    g="" f=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        g="$g $(wall_ms "$gantry" start --test-size="$n" true)"
        [ -n "$flux" ] && f="$f $(wall_ms "$flux" start --test-size="$n" true)"
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    summary "gantry start --test-size=$n" $g
    # shellcheck disable=SC2086
    [ -n "$flux" ] && summary "flux start --test-size=$n" $f
done

many="" one=""
i=0
while [ "$i" -lt "$runs" ]; do
    many="$many $(wall_ms "$gantry" start --test-size=16 "$gantry" run -N 16 -n 256 --oversubscribe true)"
    one="$one $(wall_ms "$gantry" start "$gantry" run --oversubscribe -n 256 true)"
    i=$((i + 1))
done
# shellcheck disable=SC2086
summary "16 brokers: run -N16 -n256" $many
# shellcheck disable=SC2086
summary "1 broker: run -n256" $one

# The resident set of rank 1, idle, in a 16-broker instance.
"$gantry" start --test-size=16 sh -c '
    sleep 0.5
    for p in $(pgrep -f "start --test-hosts"); do
        if tr "\0" "\n" < /proc/$p/environ | grep -qx PMI_RANK=1; then
            grep VmRSS /proc/$p/status
        fi
    done'
