#!/bin/sh
# Output throughput: 100 MB of 80-byte lines written by 1 and by 8 tasks,
# through `gantry run` into /dev/null, against the same writers started by
# the floor program (their output straight to /dev/null) and under MPICH's
# mpiexec.hydra; and 2 tasks on an instance of 2 brokers (`gantry start
# --test-size 2`), the second one's output going up the overlay, 9 on 9
# brokers (rank 0 reading 8 children) and 6 on 6 brokers in a chain (rank 1
# relaying the output of four). Prints
# GB/s (best of RUNS) and gantry's largest resident set (of any of its
# processes, the brokers included), which must not grow with the bytes
# written; nor with 1 GB of stdin that the task reads late.
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
echo "== 9 tasks on 9 brokers, a flat tree (rank 0 reads 8 children)"
for bytes in 180000000 1800000000; do
    echo "gantry memory, 9 brokers, $bytes bytes: $("$floor" -r 1 "$gantry" start --test-size 9 \
        -- "$gantry" run -N 9 -n 9 "$writer" $((bytes / 9)) 2>&1 > /dev/null |
        sed 's/max_rss_kib=//') KiB"
done
echo "== 6 tasks on 6 brokers in a chain (--fanout 1: rank 1 relays ranks 2 to 5)"
for bytes in 120000000 1200000000; do
    echo "gantry memory, a chain of 6 brokers, $bytes bytes: $("$floor" -r 1 "$gantry" start \
        --test-size 6 --fanout 1 -- "$gantry" run -N 6 -n 6 "$writer" $((bytes / 6)) 2>&1 \
        > /dev/null | sed 's/max_rss_kib=//') KiB"
done

# stdin_rss CMD...: gantry's largest resident set while CMD's one task gets
# 1 GB on stdin, which it starts reading 2 s late.
stdin_rss() {
    head -c 1000000000 /dev/zero |
        "$floor" -r 1 "$@" sh -c 'sleep 2; wc -c > /dev/null' 2>&1 | sed 's/max_rss_kib=//'
}
echo "== stdin: 1 GB to a task that reads it 2 s late"
echo "gantry memory, gantry run: $(stdin_rss "$gantry" run -n 1) KiB"
echo "gantry memory, in an instance: $(stdin_rss "$gantry" start -- "$gantry" run -n 1) KiB"
echo "gantry memory, on rank 1 of 2 brokers: $(stdin_rss "$gantry" start --test-size 2 -- \
    "$gantry" run -n 1 --requires host:node1) KiB"
