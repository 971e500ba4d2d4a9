#!/bin/sh
# An instance of many brokers on this host: `gantry start --test-size=N true`
# from start to the end of every broker, for N = 4, 16, 64 (and 256 with
# ALL=1), against `flux start --test-size=N true` where flux is on the PATH;
# then a job across 16 brokers against the same job in a one-broker instance:
# `gantry run -N 16 -n 256 true` inside `--test-size=16` and `gantry run -n
# 256 true` inside a plain `gantry start`, first with the instance's start
# and end, then the job alone (RUNS jobs in one instance, each timed; and
# across the 16 brokers in a binary tree, --fanout 2); the same for an
# MPICH program (MPI_Init, an allreduce, MPI_Finalize: the tests'
# mpi_probe) of 64 tasks; 1,000 jobs of `true` through each instance
# (bench/submit_flood; jobs per second, RUNS of each, alternated); the time
# from `kill -9` of a broker running a job to the job's end with its
# node-failure exception (--lost-after 1s). Prints
# the best and median wall time of each, and the memory of one idle broker
# (rank 1) of a 16-broker instance: its resident set, the anonymous part of
# it, and its proportional set (shared pages divided among their users).
# Usage: bench/brokers.sh path/to/gantry [RUNS]
set -eu
gantry=${1:?usage: bench/brokers.sh path/to/gantry [RUNS]}
runs=${2:-10}
flux=$(command -v flux || true)
sizes="4 16 64"
[ "${ALL:-0}" = 1 ] && sizes="$sizes 256"

timing=$(cd "$(dirname "$0")" && pwd)/lib/timing.sh
mpi_probe=$(dirname "$gantry")/tests/mpi_probe
flood=$(dirname "$gantry")/bench/submit_flood
# shellcheck source=bench/lib/timing.sh
. "$timing"
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

# times_inside START_OPTIONS COMMAND...: RUNS timings (microseconds) of
# COMMAND, run one after the other inside one instance.
times_inside() {
    options=$1
    shift
    # shellcheck disable=SC2086 # options are words
    "$gantry" start $options sh -c '
        . "$0"; runs=$1; shift; i=0
        while [ "$i" -lt "$runs" ]; do wall_ms "$@"; i=$((i + 1)); done' \
        "$timing" "$runs" "$@"
}

# shellcheck disable=SC2046
summary "16 brokers: job -N16 -n256" $(times_inside --test-size=16 "$gantry" run -N 16 -n 256 --oversubscribe true)
# shellcheck disable=SC2046
summary "1 broker: job -n256" $(times_inside "" "$gantry" run -n 256 --oversubscribe true)
# The same 16 brokers in a binary tree rather than the default one of 32
# children a broker (docs/overlay.md).
# shellcheck disable=SC2046
summary "16 brokers, fanout 2: job" $(times_inside "--test-size=16 --fanout=2" "$gantry" run -N 16 -n 256 --oversubscribe true)
if [ -x "$mpi_probe" ]; then
    # shellcheck disable=SC2046
    summary "16 brokers: MPI -N16 -n64" $(times_inside --test-size=16 "$gantry" run -N 16 -n 64 --oversubscribe "$mpi_probe")
    # shellcheck disable=SC2046
    summary "1 broker: MPI -n64" $(times_inside "" "$gantry" run -n 64 --oversubscribe "$mpi_probe")
fi

# jobs_per_s START_OPTIONS: the rate of 1,000 jobs of `true` through a
# fresh instance, as submit_flood measures it (the instance's own times).
jobs_per_s() {
    # shellcheck disable=SC2086 # options are words
    "$gantry" start $1 sh -c '"$0" "$GANTRY_URI" 1000' "$flood" |
        sed -n 's/.*instance.s times: [0-9.]* s, \([0-9.]*\) jobs\/s.*/\1/p'
}

# rates LABEL RATES...: the best (highest) and median jobs/s.
rates() {
    label=$1
    shift
    printf '%s\n' "$@" | sort -rn | awk -v label="$label" -v width="$LABEL_WIDTH" '
        { r[NR] = $1 }
        END { printf "%-*s best %8.1f /s  median %8.1f /s\n", width, label, r[1], r[int((NR + 1) / 2)] }'
}

# 1,000 jobs of true, through 16 brokers and through one, alternating run
# by run (the machine's speed drifts more than the two differ).
if [ -x "$flood" ]; then
    many="" one=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        many="$many $(jobs_per_s --test-size=16)"
        one="$one $(jobs_per_s "")"
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    rates "16 brokers: 1,000 jobs" $many
    # shellcheck disable=SC2086
    rates "1 broker: 1,000 jobs" $one
fi

# From kill -9 of rank 15 to the end of a job with tasks there (its
# node-failure exception), in a fresh instance each time.
lost=""
i=0
while [ "$i" -lt "$runs" ]; do
    # shellcheck disable=SC2016 # expanded by the instance's shell
    lost="$lost $("$gantry" start --test-size=16 --lost-after=1s sh -c '
        id=$("$0" submit -N 16 -n 16 --oversubscribe sleep 30)
        until "$0" info "$id" | grep -q "^state *RUN"; do sleep 0.01; done
        for p in $(pgrep -f "start --test-hosts"); do
            tr "\0" "\n" < /proc/$p/environ | grep -qx PMI_RANK=15 && victim=$p
        done
        begun=$(date +%s%N)
        kill -9 "$victim"
        "$0" wait "$id" > /dev/null 2>&1
        echo $((($(date +%s%N) - begun) / 1000))' "$gantry" 2>/dev/null)"
    i=$((i + 1))
done
# shellcheck disable=SC2086
summary "kill -9 to the job's end" $lost

# The resident set of rank 1, idle, in a 16-broker instance.
"$gantry" start --test-size=16 sh -c '
    sleep 0.5
    for p in $(pgrep -f "start --test-hosts"); do
        if tr "\0" "\n" < /proc/$p/environ | grep -qx PMI_RANK=1; then
            # RSS counts the executable'"'"'s pages, which the 16 brokers
            # share; PSS divides them among their users.
            grep -E "^(VmRSS|RssAnon)" /proc/$p/status
            grep "^Pss:" /proc/$p/smaps_rollup
        fi
    done'
