# The functions a document's examples script calls (tests/docs/
# extract_examples.awk writes it; examples_test.sh runs it). Their names start
# with __ so that the examples' own variables do not meet them.

__example() {
    __where=$1
    __exit=$2
    __expected=$3
    __count=$((${__count:-0} + 1))
    __out=$__out_dir/$__count
}

__skip() {
    echo "skip $1: $2" >>"$__results"
}

# The expected output as an extended regular expression of the whole output:
# every character literal but the placeholders `...` (a line of its own: any
# lines, none included; within a line: any text in that line), <host> (this
# machine's name up to its first dot), <user> and <uid> (the user running the
# test), <cores> (how many cores gantry finds on this machine).
__pattern() {
    awk -v host="$__host" -v cores="$__cores" -v user="$__user" -v uid="$__uid" '
        function literal(s) { gsub(/[][\\.^$*+?(){}|]/, "\\\\&", s); return s }
        BEGIN { any_line = "[^\n]*" }
        $0 == "..." { printf "(%s\n)*", any_line; next }
        {
            n = split($0, parts, /\.\.\./)
            line = ""
            for (i = 1; i <= n; i++) {
                part = literal(parts[i])
                gsub(/<host>/, literal(host), part)
                gsub(/<user>/, literal(user), part)
                gsub(/<uid>/, literal(uid), part)
                gsub(/<cores>/, cores, part)
                line = line (i > 1 ? any_line : "") part
            }
            printf "%s\n", line
        }' "$1"
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
        return
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
}
