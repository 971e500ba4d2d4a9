#!/usr/bin/env bash
# Times `gantry taskmap --to=raw` on the RFC 34 cyclic map of 4096 nodes x 256
# tasks: 7.3 MB of raw task map written to /dev/null, best and mean of RUNS.
# Usage: bench/taskmap_raw.sh path/to/gantry [RUNS]
set -euo pipefail
gantry=${1:?usage: $0 path/to/gantry [RUNS]}
runs=${2:-10}
map='[[0,4096,1,256]]'

echo "command: $gantry taskmap --to=raw '$map' > /dev/null"
echo "output:  $("$gantry" taskmap --to=raw "$map" | wc -c) bytes"
best=""
total=0
for ((i = 0; i < runs; i++)); do
    start=$(date +%s.%N)
    "$gantry" taskmap --to=raw "$map" > /dev/null
    end=$(date +%s.%N)
    elapsed=$(echo "$end - $start" | bc -l)
    total=$(echo "$total + $elapsed" | bc -l)
    if [[ -z $best ]] || (($(echo "$elapsed < $best" | bc -l))); then
        best=$elapsed
    fi
done
printf 'runs:    %d\nbest:    %.3f s\nmean:    %.3f s\n' "$runs" "$best" "$(echo "$total / $runs" | bc -l)"
