#!/bin/bash
# An Open MPI program under gantry run (its PMIx server) against Open MPI's
# own mpirun, on this machine, with the tests' ompi_probe
# (tests/cli/programs/ompi_probe.c, built beside gantry):
#   - `ompi_probe time` (MPI_Init, MPI_Finalize) at N = 1, 8, 64: the wall
#     time of `gantry run --oversubscribe -n N` and of `mpirun.openmpi
#     --oversubscribe -n N`, and the floor, the time from main's start to
#     the end of MPI_Finalize that rank 0 reports under each;
#   - `ompi_probe loop 1000` at N = 2: the time of 1000 allreduces of one
#     int that rank 0 reports under each.
# Everything alternates run by run, so that each sees the same machine.
# Prints the best and median of each. Where Open MPI or the probe is
# missing, says so and exits 0.
# Usage: bench/ompi_hello.sh path/to/gantry [RUNS]
set -eu
usage="usage: bench/ompi_hello.sh path/to/gantry [RUNS]"
gantry=${1:?$usage}
runs=${2:-10}
probe=$(dirname "$gantry")/tests/ompi_probe

# shellcheck source=bench/lib/timing.sh
. "$(dirname "$0")/lib/timing.sh"
LABEL_WIDTH=44

if ! command -v mpirun.openmpi > /dev/null; then
    echo "(Open MPI's mpirun.openmpi is not installed: not timed)"
    exit 0
fi
if [ ! -x "$probe" ]; then
    echo "($probe is not built: not timed)"
    exit 0
fi

# The launchers, each followed by N, the probe and its arguments. As root,
# Open MPI's mpirun runs nothing without --allow-run-as-root. (timed names
# them.)
# shellcheck disable=SC2034
gantry_cmd=("$gantry" run --oversubscribe -n)
# shellcheck disable=SC2034
mpirun_cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe -n)

# timed NAME LAUNCHER N ARGS...: runs `LAUNCHER N ompi_probe ARGS...` (60 s
# at most) and adds its wall time to times[NAME] and what rank 0 reports
# (init_to_finalize_ms=, or seconds=), in microseconds, to times[NAME.own].
declare -A times
timed() {
    local name=$1 n=$3 start end out own
    local -n launcher=${2}_cmd
    shift 3
    start=$(date +%s%N)
    out=$(timeout 60 "${launcher[@]}" "$n" "$probe" "$@" 2> /dev/null) || true
    end=$(date +%s%N)
    own=$(printf '%s\n' "$out" | awk -F= '
        /^init_to_finalize_ms=/ { printf "%d\n", $2 * 1000 }
        /^loop=/ { split($0, kv, "seconds="); printf "%d\n", kv[2] * 1e6 }')
    # One line: rank 0's. (Tasks that each ran alone, rank 0 of 1, would
    # print one each.)
    if [ -z "$own" ] || [ "$(printf '%s\n' "$own" | wc -l)" != 1 ]; then
        echo "bench: failed: ${launcher[*]} $n $probe $*" >&2
        return
    fi
    times[$name]="${times[$name]:-} $(((end - start) / 1000))"
    times[$name.own]="${times[$name.own]:-} $own"
}

sizes="1 8 64"
for ((i = 0; i < runs; i++)); do
    for n in $sizes; do
        timed "gantry$n" gantry "$n" time
        timed "mpirun$n" mpirun "$n" time
    done
    timed gantry_loop gantry 2 loop 1000
    timed mpirun_loop mpirun 2 loop 1000
done

# row LABEL NAME [us]: the best and median of times[NAME] in ms (with us,
# in microseconds), or that every run failed.
row() {
    local label=$1 values=${times[$2]:-}
    if [ -z "$values" ]; then
        printf '%-*s every run failed\n' "$LABEL_WIDTH" "$label"
    elif [ "${3:-}" = us ]; then
        # shellcheck disable=SC2086 # one word per run
        printf '%s\n' $values | sort -n | awk -v label="$label" -v width="$LABEL_WIDTH" '
            { t[NR] = $1 }
            END { printf "%-*s best %8d us  median %8d us\n", width, label, t[1], t[int((NR + 1) / 2)] }'
    else
        # shellcheck disable=SC2086
        summary "$label" $values
    fi
}

echo "== Open MPI hello, ompi_probe time ($runs runs each)"
for n in $sizes; do
    row "gantry run -n $n: wall" "gantry$n"
    row "mpirun.openmpi -n $n: wall" "mpirun$n"
    row "  main to MPI_Finalize's end, under gantry" "gantry$n.own"
    row "  main to MPI_Finalize's end, under mpirun" "mpirun$n.own"
done
echo "== ompi_probe loop 1000: 1000 allreduces of an int, N = 2 ($runs runs each)"
row "gantry run -n 2: the loop" gantry_loop.own us
row "mpirun.openmpi -n 2: the loop" mpirun_loop.own us
row "gantry run -n 2: wall" gantry_loop
row "mpirun.openmpi -n 2: wall" mpirun_loop
