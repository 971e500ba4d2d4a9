#!/bin/sh
# Runs every library benchmark, then every whole-command benchmark script.
# Usage: scripts/bench.sh BUILD_DIR
set -eu
build=$1
for b in "$build"/bench/*_bench; do
    echo "== $(basename "$b")"
    "$b" --benchmark_counters_tabular=true
done
for s in bench/*.sh; do
    [ -e "$s" ] || continue
    echo "== $s"
    "$s" "$build/gantry"
done
