#!/bin/bash
# Runs every example of README.md, docs/ and each command's --help and
# compares what it prints with what the document shows (docs/development.md,
# "Checked examples", says how an example is written).
#
# Usage: examples_test.sh GANTRY SOURCE_DIR [DOCUMENT...]
#   GANTRY      the gantry binary to test
#   SOURCE_DIR  the checkout (README.md, docs/, tests/docs/)
#   DOCUMENT    only these: a markdown path relative to SOURCE_DIR, or
#               `help:COMMAND` (default: every document)
#
# Each document runs in a fresh directory of its own with the example
# programs (./a, ./solver, ...), HOME and TMPDIR there, gantry first in PATH
# (also as build/gantry) and, when it needs one, GANTRY_URI naming a fresh
# instance; everything is removed at the end, also on failure. GANTRY_EXAMPLES_MPI_PROBE names the
# MPI program the examples run as ./mpi_probe (default: tests/mpi_probe
# beside GANTRY).
set -u
# Each document runs as a process group of its own, to be ended as one.
set -m

if (($# < 2)); then
    echo "usage: $0 GANTRY SOURCE_DIR [DOCUMENT...]" >&2
    exit 2
fi
gantry=$(realpath "$1")
source_dir=$(realpath "$2")
shift 2
here=$source_dir/tests/docs
mpi_probe=$(realpath "${GANTRY_EXAMPLES_MPI_PROBE:-$(dirname "$gantry")/tests/mpi_probe}")

# Under /tmp, as the examples show the instances' temporary state directories.
scratch=$(mktemp -d /tmp/gantry-examples.XXXXXX) || exit 1

# Ends every instance still running under the scratch directory (the test's
# and those the examples start), then removes it.
cleanup() {
    local socket running pid
    # The documents still running (interrupted), each a process group of
    # its own (set -m), then their instances.
    mapfile -t running < <(jobs -p)
    for pid in "${running[@]}" $(cat "$scratch"/*/examples.pid 2>/dev/null); do
        kill -- "-$pid" 2>/dev/null
    done
    wait
    while IFS= read -r socket; do
        env -u GANTRY_URI "$gantry" shutdown --force --uri "unix://$socket" >/dev/null 2>&1
    done < <(find "$scratch" -type s -name socket 2>/dev/null)
    [[ -n ${KEEP_RESULTS:-} ]] && cp "$scratch/results" "$KEEP_RESULTS"
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The commands whose --help examples run in an instance.
instance_commands='submit|attach|jobs|info|eventlog|wait|kill|cancel|purge|urgency|alloc|batch|job|resource list|resource|overlay status|overlay'

# What the --help examples of a command take as given, made before them: the
# jobs they name, with those ids, in the states they show.
declare -A help_setup=(
    [run]='printf "node0 slots=2\\nnode1 slots=2\\nnode2 slots=2\\n" >hosts'
    [jobs]='gantry submit false; gantry submit -n 2 hostname; gantry wait 1; gantry wait 2;
            gantry submit sleep 60; __running 3; gantry submit -n 2 ./solver'
    [info]='gantry submit true; gantry submit -n 2 hostname; gantry wait 2'
    [eventlog]='gantry submit true; gantry submit -n 2 hostname; gantry wait 2'
    [kill]="for i in 1 2; do gantry submit sh -c 'trap \"\" TERM USR1 INT; sleep 60'; done;
            __running 1 2; gantry submit -n 2 hostname"
    [cancel]='for i in 1 2 3 4; do gantry submit sleep 60; done'
    [purge]='for i in 1 2 3 4; do gantry submit true; done; gantry wait --all'
    [urgency]='gantry submit -n 2 sleep 60; __running 1; gantry submit ./solver'
)

# Examples of --help texts that cannot run here, by where they are, with why.
# A help text that changes moves its examples: the entry no longer matches
# and the example runs (and fails) again, to be looked at.
declare -A help_not_run=(
    ['help:start:39']='an interactive shell'
    ['help:alloc:28']='an interactive shell'
)

host=$(hostname)
host=${host%%.*}
user=$(id -un 2>/dev/null || id -u)
cores=$("$gantry" R encode --local | "$gantry" R decode --count core)

documents=("$@")
if ((${#documents[@]} == 0)); then
    documents=(README.md)
    while IFS= read -r path; do
        documents+=("${path#"$source_dir"/}")
    done < <(find "$source_dir/docs" -name '*.md' | sort)
    for command in $("$gantry" --help | awk '/^Commands:/ { on = 1; next } on && /^  [^ ]/ { print $1 }'); do
        documents+=("help:$command")
        if [[ $command == R ]]; then
            for sub in $("$gantry" R --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [^ ]/ { print $1 } on && /^$/ { on = 0 }'); do
                documents+=("help:R $sub")
            done
        fi
    done
fi

# The programs examples run, in each document's directory: they print
# nothing and exit 0, but ./server, which runs until it is killed.
make_fixtures() {
    local dir=$1 program
    for program in a b app solver monitor mpi_app postprocess client workflow.sh steps.sh; do
        printf '#!/bin/sh\nexit 0\n' >"$dir/$program"
    done
    printf '#!/bin/sh\nexec sleep 600\n' >"$dir/server"
    # An MPICH program: tests/cli/programs/mpi_probe.cpp.
    ln -s "$mpi_probe" "$dir/mpi_probe"
    # An Open MPI program: tests/cli/programs/ompi_probe.c.
    ln -s "$(dirname "$mpi_probe")/ompi_probe" "$dir/ompi_probe"
    # A machine of 2 packages of 22 cores, for `R encode --xml machine.xml`.
    lstopo --input "package:2 core:22 pu:2" --of xml "$dir/machine.xml" 2>/dev/null
    chmod +x "$dir"/{a,b,app,solver,monitor,mpi_app,postprocess,client,workflow.sh,steps.sh,server}
    mkdir -p "$dir/build" "$dir/home" "$dir/tmp"
    ln -s "$gantry" "$dir/build/gantry"
}

# Runs the examples of document $2 in the directory $1; what they give goes
# to $1/results.
run_document() {
    local dir=$1 document=$2 format uri where results=$1/results
    mkdir -p "$dir/expected" "$dir/out"
    : >"$results"
    make_fixtures "$dir"
    if [[ $document == help:* ]]; then
        # shellcheck disable=SC2086 # "R encode" is two words
        "$gantry" ${document#help:} --help >"$dir/source" || {
            echo "FAIL $document: --help exits $?" >>"$results"
            return
        }
        format=help
    else
        cp "$source_dir/$document" "$dir/source"
        format=markdown
    fi
    : >"$dir/examples.sh"
    if [[ -n ${help_setup[${document#help:}]:-} ]]; then
        printf '__setup %q %q\n' "$document" "${help_setup[${document#help:}]}" >"$dir/examples.sh"
    fi
    awk -v format="$format" -v name="$document" -v expected_dir="$dir/expected" \
        -f "$here/extract_examples.awk" "$dir/source" >>"$dir/examples.sh"
    for where in "${!help_not_run[@]}"; do
        [[ $where == "$document":* ]] || continue
        # The example at $where, from its __example line to its __check.
        awk -v where="$where" -v reason="${help_not_run[$where]}" '
            $1 == "__example" && $2 == "'\''" where "'\''" { skipping = 1; print "__skip \"" where "\" \"" reason "\""; next }
            skipping { if ($0 == "__check $?") skipping = 0; next }
            { print }' "$dir/examples.sh" >"$dir/examples.sh.new" && mv "$dir/examples.sh.new" "$dir/examples.sh"
        grep -qF "__skip \"$where\"" "$dir/examples.sh" ||
            echo "FAIL help_not_run: $where names no example (the text moved?)" >>"$results"
    done
    grep -q '^__example\|^__skip' "$dir/examples.sh" || return
    if ! bash -n "$dir/examples.sh" 2>"$dir/syntax"; then
        echo "FAIL $document: its examples are not a valid shell script: $(head -1 "$dir/syntax")" >>"$results"
        return
    fi

    # The commands that talk to an instance get one in their --help; a
    # markdown document asks for one with <!-- example: instance -->.
    uri=
    if [[ $document =~ ^help:($instance_commands)$ ]] ||
        grep -q '^<!-- example: instance -->$' "$dir/source"; then
        uri=$(cd "$dir" && env -u GANTRY_URI HOME="$dir/home" TMPDIR="$dir/tmp" "$gantry" start --daemon) || {
            echo "FAIL $document: gantry start --daemon exits $?" >>"$results"
            return
        }
    fi
    (
        cd "$dir" || exit 1
        PATH=$(dirname "$gantry"):$PATH
        export HOME=$dir/home TMPDIR=$dir/tmp PATH
        unset GANTRY_URI
        [[ -n $uri ]] && export GANTRY_URI=$uri
        __uid=$(id -u)
        export __results=$results __host=$host __user=$user __uid __cores=$cores __here=$here
        export __out_dir=$dir/out
        start=$EPOCHREALTIME
        # timeout runs the examples as a process group of its own: its pid
        # is that group's, for cleanup to end.
        # shellcheck disable=SC2016 # expanded by that shell
        timeout 60 bash --norc -c 'source "$__here/examples_lib.sh"; source ./examples.sh' &
        echo $! >"$dir/examples.pid"
        wait $!
        status=$?
        rm "$dir/examples.pid"
        ((status == 124)) && echo "FAIL $document: the examples did not end within 60 s" >>"$results"
        echo "time $document: $(awk -v a="$start" -v b="$EPOCHREALTIME" "BEGIN { printf \"%.1f\", b - a }") s" >>"$results"
    )
    [[ -n $uri ]] && env -u GANTRY_URI "$gantry" shutdown --force --uri "$uri" >/dev/null 2>&1
}

# The documents run side by side, four at a time: each has its own directory
# and instance, and most of their time is spent waiting on jobs.
index=0
for document in "${documents[@]}"; do
    index=$((index + 1))
    while (($(jobs -rp | wc -l) >= 4)); do
        wait -n
    done
    run_document "$scratch/$index" "$document" &
done
wait
results=$scratch/results
for ((i = 1; i <= index; i++)); do
    cat "$scratch/$i/results"
done >"$results"

ran=$(grep -c '^ok \|^FAIL .*:[0-9]*: ' "$results")
passed=$(grep -c '^ok ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^skip ' "$results")
echo "slowest documents: $(grep '^time ' "$results" | sort -t: -k2 -n -r | head -3 |
    sed 's/^time //; s/ s$/ s;/' | paste -sd' ')"
if ((skipped > 0)); then
    echo "not run ($skipped):"
    grep '^skip ' "$results" | sed 's/^skip /  /'
fi
if ((failed > 0)); then
    grep -v '^ok \|^skip \|^time ' "$results"
fi
echo "$ran examples run, $passed passed, $failed failed; $skipped not run"
((failed == 0 && ran > 0))
