#!/bin/sh
# Jobs per second through an instance (`gantry start --daemon` on this
# machine, its default inventory), each part on a fresh state directory:
#  (a) JOBS jobs of `true` submitted through the API as fast as one client
#      can (bench/submit_flood.cpp), then job.wait all: submit latency
#      (median, p99) and jobs/s from the first submit to the last INACTIVE;
#  (b) the same with `gantry submit` run JOBS times from the shell, then
#      `gantry wait --all`;
#  (c) the broker's memory after MEMORY_JOBS jobs of `true` (submitted as in
#      (a), all waited for): VmRSS and VmHWM of its pid, from /proc;
#  (d) Flux, if installed: `flux start flux submit --cc=1-JOBS --wait true`.
# Usage: bench/throughput.sh path/to/gantry [JOBS] [MEMORY_JOBS]   (default 1000 10000)
set -eu
gantry=${1:?usage: bench/throughput.sh path/to/gantry [JOBS] [MEMORY_JOBS]}
jobs=${2:-1000}
memory_jobs=${3:-10000}
flood=$(dirname "$gantry")/bench/submit_flood
work=$(mktemp -d)
uri=""
stop() {
    [ -z "$uri" ] || "$gantry" shutdown --uri "$uri" || true
    uri=""
}
trap 'stop; rm -rf "$work"' EXIT

# start NAME: a fresh instance on $work/NAME; sets uri.
start() {
    uri=$("$gantry" start --daemon --state-dir "$work/$1")
}

now_ns() { date +%s%N; }

echo "machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== (a) $jobs jobs of true through the API, one client ($flood)"
start api
"$flood" "$uri" "$jobs"
stop

echo "== (b) $jobs x gantry submit true, then gantry wait --all"
start cli
begun=$(now_ns)
i=0
while [ "$i" -lt "$jobs" ]; do
    "$gantry" submit --uri "$uri" true > /dev/null
    i=$((i + 1))
done
submitted=$(now_ns)
"$gantry" wait --uri "$uri" --all
ended=$(now_ns)
awk -v n="$jobs" -v b="$begun" -v s="$submitted" -v e="$ended" 'BEGIN {
    printf "submitted %d jobs in %.2f s (%.0f submits/s, %.2f ms each)\n", n, (s - b) / 1e9, n / ((s - b) / 1e9), (s - b) / 1e6 / n
    printf "all inactive %.2f s after the first submit: %.1f jobs/s\n", (e - b) / 1e9, n / ((e - b) / 1e9)
}'
stop

echo "== (c) broker memory after $memory_jobs jobs of true"
start memory
pid=$("$gantry" instance info --uri "$uri" --json | sed 's/.*"pid":\([0-9]*\).*/\1/')
echo "at start: $(grep -E '^Vm(RSS|HWM)' "/proc/$pid/status" | tr -s ' \t' ' ' | paste -sd, -)"
"$flood" "$uri" "$memory_jobs"
echo "after $memory_jobs jobs: $(grep -E '^Vm(RSS|HWM)' "/proc/$pid/status" | tr -s ' \t' ' ' | paste -sd, -) (goal: under 100 MB)"
echo "state directory: $(du -sk "$work/memory" | cut -f1) KiB"
stop

echo "== (d) flux"
if command -v flux > /dev/null; then
    begun=$(now_ns)
    flux start flux submit --cc=1-"$jobs" --wait true > /dev/null
    ended=$(now_ns)
    awk -v n="$jobs" -v b="$begun" -v e="$ended" 'BEGIN {
        printf "flux start flux submit --cc=1-%d --wait true: %.2f s, %.1f jobs/s (instance start included)\n", n, (e - b) / 1e9, n / ((e - b) / 1e9)
    }'
else
    echo "flux is not installed: skipped"
fi
