#!/bin/sh
# gantry's mapper beside Open MPI's: both map N nodes of 2 packages x 128
# cores, 256 tasks per node by core, and print the map; each side's wall
# time, CPU time and peak RSS at each size. Then the mapper benchmark's cases
# (bench/mapper_bench.cpp) through the whole gantry command.
#
# Usage: bench/mapper_vs_ompi.sh path/to/gantry [NODES...]   (default: 16 256 4096)
# Environment: OMPI_TIMEOUT (seconds per mpirun, default 600).
#
# Needs: mpirun (Open MPI; Debian: apt-get install openmpi-bin), GNU time
# (apt-get install time), lstopo-no-graphics (apt-get install hwloc).
# Without mpirun it times gantry alone and says so.
#
# Open MPI 4.1 maps offline with
#   HWLOC_XMLFILE=topo.xml mpirun --allow-run-as-root --novm --do-not-launch
#       --display-map --mca if_base_do_not_resolve 1 --hostfile HOSTFILE -np N ...
# --allow-run-as-root: mpirun refuses root otherwise; if_base_do_not_resolve:
# the hostfile's names resolve nowhere and each lookup otherwise waits on DNS.
# With --novm, Open MPI 4.1.4 prints the whole map and then aborts (SIGABRT
# in odls, "ORTE_ERROR_LOG: Not found"); the map is complete, so the run
# counts, and the table says how it ended.
set -eu
gantry=${1:?usage: bench/mapper_vs_ompi.sh path/to/gantry [NODES...]}
shift
sizes=${*:-16 256 4096}
timeout_s=${OMPI_TIMEOUT:-600}

if [ ! -x /usr/bin/time ]; then
    echo "mapper_vs_ompi: /usr/bin/time not found; install it: apt-get install time" >&2
    exit 2
fi
if ! command -v lstopo-no-graphics > /dev/null; then
    echo "mapper_vs_ompi: lstopo-no-graphics not found; install it: apt-get install hwloc" >&2
    exit 2
fi
have_ompi=yes
if ! command -v mpirun > /dev/null; then
    have_ompi=no
    echo "*** mapper_vs_ompi: mpirun not found: Open MPI SKIPPED, gantry timed alone." >&2
    echo "*** Install Open MPI to compare: apt-get install openmpi-bin" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No core files from an aborting mpirun: writing them would be timed too.
ulimit -c 0

lstopo-no-graphics -i "package:2 core:128 pu:1" --of xml - > "$work/topo.xml" 2> /dev/null

hostfile() {
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "node" i " slots=256" }' \
        > "$work/hosts.$1"
    echo "$work/hosts.$1"
}

# measure LABEL PATTERN OUT COMMAND...: runs COMMAND with its output to OUT;
# prints wall, CPU (user+sys) and peak RSS, the output lines that match
# PATTERN (one per task in a map; "-" for /dev/null), and how it ended.
measure() {
    label=$1
    pattern=$2
    out=$3
    shift 3
    status=0
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > "$out" 2> "$work/err" || status=$?
    lines=-
    [ "$out" = /dev/null ] || lines=$(grep -c "$pattern" "$out" || true)
    # GNU time writes "Command terminated by signal N" first when it was.
    set -- $(tail -n 1 "$work/time")
    ended="exit $status"
    if grep -q "terminated by signal" "$work/time"; then
        ended="signal $(sed -n 's/.*signal \([0-9]*\).*/\1/p' "$work/time")"
    fi
    # timeout: 124 after TERM, 137 after the KILL that follows when mpirun
    # ignores TERM (it does while mapping).
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then ended="timeout ${timeout_s}s"; fi
    printf '%-38s wall %8.2f s  cpu %8.2f s  rss %8d KB  %8s lines  %s\n' \
        "$label" "$1" "$(echo "$2 $3" | awk '{ print $1 + $2 }')" "$4" "$lines" "$ended"
}

echo "machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gantry: $gantry"
[ "$have_ompi" = yes ] && echo "open mpi: $(mpirun --version 2> /dev/null | head -n 1)"
echo
echo "== --map-by core, 256 tasks per node, --display map (output to a file)"
for n in $sizes; do
    hosts=$(hostfile "$n")
    np=$((n * 256))
    measure "gantry  $n nodes, $np tasks" "Process jobid" "$work/out" \
        "$gantry" run --dry-run --display map --hostfile "$hosts" \
        --topology "$work/topo.xml" -n "$np" --map-by core a.out
    if [ "$have_ompi" = yes ]; then
        measure "mpirun  $n nodes, $np tasks" "Process OMPI jobid" "$work/out" \
            env HWLOC_XMLFILE="$work/topo.xml" timeout -k 10 "$timeout_s" \
            mpirun --allow-run-as-root --novm --do-not-launch --display-map \
            --mca if_base_do_not_resolve 1 --hostfile "$hosts" -np "$np" --map-by core a.out
    fi
done

echo
echo "== bench/mapper_bench.cpp's cases through gantry run (output to /dev/null)"
for n in 256 4096; do
    hosts=$(hostfile "$n")
    np=$((n * 256))
    third=$((np / 3))
    run="$gantry run --dry-run --hostfile $hosts --topology $work/topo.xml"
    for display in none map:json; do
        show=""
        [ "$display" = none ] || show="--display $display"
        measure "core $n nodes $display" "" /dev/null $run $show -n "$np" --map-by core a.out
        measure "node $n nodes $display" "" /dev/null $run $show -n "$np" --map-by node a.out
        measure "ppr:2:package:PE=4 $n nodes $display" "" /dev/null \
            $run $show -n $((n * 4)) --map-by ppr:2:package:PE=4 a.out
        measure "mpmd core/node/package $n nodes $display" "" /dev/null \
            $run $show -n "$third" --map-by core a : -n "$third" --map-by node b \
            : -n $((np - 2 * third)) --map-by package c
    done
done
