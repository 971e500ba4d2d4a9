#!/bin/sh
# Times whole gantry commands on large inputs: best and mean wall time of
# RUNS runs each, output to /dev/null.
# Usage: bench/commands.sh path/to/gantry [RUNS]
set -eu
gantry=${1:?usage: bench/commands.sh path/to/gantry [RUNS]}
runs=${2:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Inputs: 100,000 scattered ids, 100,000 host names, R of 10,000 nodes.
awk 'BEGIN { for (i = 0; i < 300000; i += 3) print i }' > "$work/ids"
awk 'BEGIN { for (i = 0; i < 100000; i++) print "node" i }' > "$work/hosts"
"$gantry" R encode -r 0-9999 -c 0-63 -g 0-3 -H 'node[0-9999]' -p login:0-15 -p big:5000-9999 \
    > "$work/R.json"

now() { date +%s.%N; }

# time_command LABEL COMMAND: runs COMMAND (a shell line) RUNS times.
time_command() {
    label=$1
    shift
    times=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        start=$(now)
        sh -c "$*" > /dev/null
        end=$(now)
        times="$times $start:$end"
        i=$((i + 1))
    done
    echo "$times" | awk -v label="$label" -v cmd="$*" '{
        best = -1; total = 0
        for (i = 1; i <= NF; i++) {
            split($i, t, ":"); d = t[2] - t[1]; total += d
            if (best < 0 || d < best) best = d
        }
        printf "%-28s best %.3f s  mean %.3f s  (%d runs)  %s\n", label, best, total / NF, NF, cmd
    }'
}

echo "machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
time_command "taskmap raw 4096x256 cyclic" "'$gantry' taskmap --to=raw '[[0,4096,1,256]]'"
time_command "taskmap pmi 4096x256 cyclic" "'$gantry' taskmap --to=pmi '[[0,4096,1,256]]'"
time_command "idset union 100k ids" "'$gantry' idset < '$work/ids'"
time_command "hostlist compress 100k" "'$gantry' hostlist < '$work/hosts'"
time_command "R decode 10k nodes" "'$gantry' R decode --short < '$work/R.json'"
time_command "R diff 10k nodes" "cat '$work/R.json' '$work/R.json' | '$gantry' R diff"
