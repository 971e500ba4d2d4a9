# shellcheck shell=sh
# The timing functions of the whole-command benchmarks (bench/*.sh source
# this file).

# wall_ms COMMAND...: microseconds the command takes, output discarded
# (the name is older than the unit).
wall_ms() {
    start=$(date +%s%N)
    "$@" > /dev/null 2>&1 || echo "bench: failed: $*" >&2
    end=$(date +%s%N)
    echo $(((end - start) / 1000))
}

# summary LABEL MICROSECONDS...: best and median in ms; LABEL_WIDTH (default
# 8) pads the label.
summary() {
    label=$1
    shift
    printf '%s\n' "$@" | sort -n | awk -v label="$label" -v width="${LABEL_WIDTH:-8}" '
        { t[NR] = $1 }
        END { printf "%-*s best %8.1f ms  median %8.1f ms\n", width, label, t[1] / 1000, t[int((NR + 1) / 2)] / 1000 }'
}
