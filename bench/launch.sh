#!/bin/sh
# Launch cost: `gantry run -n N true` against MPICH's `mpiexec.hydra -n N true`
# and against the floor (a program that only posix_spawns N `true` and waits),
# interleaved run by run so that all three see the same machine. Prints the
# best and median wall time of each, gantry's ratio to the floor, and the
# front end's largest resident set at N = 256. With a second gantry (another
# build, such as the one before a change), its runs are interleaved too.
# Usage: bench/launch.sh path/to/gantry [RUNS [OTHER_GANTRY]]
set -eu
gantry=${1:?usage: bench/launch.sh path/to/gantry [RUNS [OTHER_GANTRY]]}
runs=${2:-20}
other=${3:-}
floor=$(dirname "$gantry")/bench/spawn_floor
hydra=$(command -v mpiexec.hydra || true)

# shellcheck source=bench/lib/timing.sh
. "$(dirname "$0")/lib/timing.sh"

for n in 1 8 64 256; do
    f="" g="" h="" o=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        f="$f $(wall_ms "$floor" "$n" true)"
        g="$g $(wall_ms "$gantry" run --oversubscribe -n "$n" true)"
        [ -n "$hydra" ] && h="$h $(wall_ms "$hydra" -n "$n" true)"
        [ -n "$other" ] && o="$o $(wall_ms "$other" run --oversubscribe -n "$n" true)"
        i=$((i + 1))
    done
    echo "== N = $n ($runs runs each)"
    # shellcheck disable=SC2086
    summary floor $f
    # shellcheck disable=SC2086
    summary gantry $g
    # shellcheck disable=SC2086
    [ -n "$hydra" ] && summary hydra $h
    # shellcheck disable=SC2086
    [ -n "$other" ] && summary other $o
    # shellcheck disable=SC2086
    printf '%s\n%s\n' "$(printf '%s\n' $f | sort -n | head -1)" "$(printf '%s\n' $g | sort -n | head -1)" |
        awk 'NR == 1 { f = $1 } NR == 2 { printf "gantry / floor (best): %.2f, gantry - floor: %.1f ms\n", $1 / f, ($1 - f) / 1000 }'
done
echo "== front end memory"
"$floor" -r 1 "$gantry" run --oversubscribe -n 256 true 2>&1 | sed 's/^/gantry run -n 256 true: /'
