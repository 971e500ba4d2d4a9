#!/bin/sh
# Output throughput: 100 MB of 80-byte lines written by 1 and by 8 tasks,
# through `gantry run` into /dev/null, against the same writers started by
# the floor program (their output straight to /dev/null) and under MPICH's
# mpiexec.hydra; and 2 tasks on an instance of 2 brokers (`gantry start
# --test-size 2`), the second one's output going up the overlay. Prints
# GB/s (best of RUNS) and gantry's largest resident set (of any of its
# processes, the brokers included), which must not grow with the bytes
# written.
# Usage: bench/io.sh path/to/gantry [RUNS]
set -eu
gantry=${1:?usage: bench/io.sh path/to/gantry [RUNS]}
runs=${2:-5}
dir=$(dirname "$gantry")/bench
floor=$dir/spawn_floor
writer=$dir/line_writer
hydra=$(command -v mpiexec.hydra || true)
total=100000000

# best_gbps COMMAND...: the best throughput of RUNS runs, in GB/s.
best_gbps() {
    best=0
    i=0
    while [ "$i" -lt "$runs" ]; do
        start=$(date +%s%N)
        "$@" > /dev/null 2>&1 || echo "bench: failed: $*" >&2
        end=$(date +%s%N)
        best=$(awk -v b="$best" -v ns=$((end - start)) -v bytes="$total" \
            'BEGIN { r = bytes / ns; print (r > b ? r : b) }')
        i=$((i + 1))
    done
    printf '%.2f GB/s' "$best"
}

for tasks in 1 8; do
    each=$((total / tasks))
    echo "== $tasks task(s) x $each bytes"
    echo "floor   $(best_gbps "$floor" "$tasks" "$writer" "$each")"
    echo "gantry  $(best_gbps "$gantry" run --oversubscribe -n "$tasks" "$writer" "$each")"
    [ -n "$hydra" ] && echo "hydra   $(best_gbps "$hydra" -n "$tasks" "$writer" "$each")"
    for bytes in 10000000 100000000 1000000000; do
        echo "gantry memory, $tasks task(s), $bytes bytes: $("$floor" -r 1 "$gantry" run --oversubscribe \
            -n "$tasks" "$writer" $((bytes / tasks)) 2>&1 > /dev/null | sed 's/max_rss_kib=//') KiB"
    done
done
echo "== 2 tasks on 2 brokers x $((total / 2)) bytes"
instance="$gantry start --test-size 2 -- $gantry run -N 2 -n 2 $writer"
# shellcheck disable=SC2086 # $instance is words
echo "gantry  $(best_gbps $instance $((total / 2)))"
for bytes in 10000000 100000000 1000000000; do
    # shellcheck disable=SC2086
    echo "gantry memory, 2 brokers, $bytes bytes: $("$floor" -r 1 $instance $((bytes / 2)) 2>&1 \
        > /dev/null | sed 's/max_rss_kib=//') KiB"
done
