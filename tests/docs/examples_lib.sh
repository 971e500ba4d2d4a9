# shellcheck shell=bash disable=SC2154 # __results, __host... come from examples_test.sh
# The functions a document's examples script calls (tests/docs/
# extract_examples.awk writes it; examples_test.sh runs it). Their names start
# with __ so that the examples' own variables do not meet them.

# $? stays the previous example's exit status, as in a terminal.
__example() {
    local status=$?
    __where=$1
    __exit=$2
    __expected=$3
    __count=$((${__count:-0} + 1))
    __out=$__out_dir/$__count
    return "$status"
}

__skip() {
    echo "skip $1: $2" >>"$__results"
}

# The expected output as an extended regular expression of the whole output:
# every character literal but the placeholders
#   ...     a line of its own: any lines, none included; within a line: any
#           text in that line
#   <host>  this machine's name up to its first dot
#   <user>  <uid>  the user running the test
#   <cores> how many cores gantry finds on this machine
#   <pid>   a process id
#   <time>  a time as gantry prints it: 0.152031, 1.234m, 12.31s or
#           2025-03-04T10:11:12.345678Z
# Spaces beside a placeholder stand for one or more (the columns of a table).
__pattern() {
    awk -v host="$__host" -v cores="$__cores" -v user="$__user" -v uid="$__uid" '
        function literal(s) { gsub(/[][\\.^$*+?(){}|]/, "\\\\&", s); return s }
        BEGIN { any_line = "[^\n]*" }
        /^ *\.\.\. *$/ { printf "(%s\n)*", any_line; next }
        {
            n = split($0, parts, /\.\.\./)
            line = ""
            for (i = 1; i <= n; i++) {
                part = literal(parts[i])
                gsub(/ *<(host|user|uid|cores|pid|time)> */, "\001&\001", part)
                gsub(/\001 +/, " +", part)
                gsub(/ +\001/, " +", part)
                gsub(/\001/, "", part)
                gsub(/<host>/, literal(host), part)
                gsub(/<user>/, literal(user), part)
                gsub(/<uid>/, literal(uid), part)
                gsub(/<cores>/, cores, part)
                gsub(/<pid>/, "[0-9]+", part)
                gsub(/<time>/, "([0-9]+(\\.[0-9]+)?[smhd]?|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z)", part)
                line = line (i > 1 ? any_line : "") part
            }
            printf "%s\n", line
        }' "$1"
}

# Waits (up to 10 s) until each job given runs: what the examples that signal
# a running job need before them.
__running() {
    local id tries
    for id in "$@"; do
        for ((tries = 0; tries < 500; tries++)); do
            gantry eventlog "$id" 2>/dev/null | grep -q '^[0-9.]* start' && break
            sleep 0.02
        done
    done
}

__check() {
    local status=$1 actual pattern problem=""
    if [[ $status != "$__exit" ]]; then
        problem="exit status $status, the document says $__exit"
    fi
    if [[ $__expected != - ]]; then
        actual=$(cat "$__out")
        [[ -n $actual ]] && actual+=$'\n'
        pattern=$(__pattern "$__expected" && echo x)
        pattern=${pattern%x}
        if ! [[ $actual =~ ^${pattern}$ ]]; then
            problem+="${problem:+; }the output differs"
        fi
    fi
    if [[ -z $problem ]]; then
        echo "ok $__where" >>"$__results"
        return "$status"
    fi
    {
        echo "FAIL $__where: $problem"
        if [[ $__expected != - ]]; then
            echo "  --- the document shows"
            sed 's/^/  | /' "$__expected"
        fi
        echo "  --- gantry printed"
        sed 's/^/  | /' "$__out"
    } >>"$__results"
    return "$status"
}

__setup() {
    eval "$2" >/dev/null 2>&1 </dev/null || echo "FAIL $1: the setup exits $?: $2" >>"$__results"
}
