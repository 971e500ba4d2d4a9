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
# (also as build/gantry) and GANTRY_URI naming a fresh instance; everything is
# removed at the end, also on failure.
set -u

if (($# < 2)); then
    echo "usage: $0 GANTRY SOURCE_DIR [DOCUMENT...]" >&2
    exit 2
fi
gantry=$(realpath "$1")
source_dir=$(realpath "$2")
shift 2
here=$source_dir/tests/docs

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gantry-examples.XXXXXX") || exit 1

# Ends every instance still running under the scratch directory (the test's
# and those the examples start), then removes it.
cleanup() {
    local socket
    while IFS= read -r socket; do
        env -u GANTRY_URI "$gantry" shutdown --force --uri "unix://$socket" >/dev/null 2>&1
    done < <(find "$scratch" -type s -name socket 2>/dev/null)
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The commands whose --help examples run in an instance.
instance_commands='submit|attach|jobs|info|eventlog|wait|kill|cancel|purge|urgency|alloc|batch|job'

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
# nothing and exit 0 (./fail exits 1).
make_fixtures() {
    local dir=$1 program
    for program in a b app solver monitor mpi_app postprocess server client workflow.sh steps.sh; do
        printf '#!/bin/sh\nexit 0\n' >"$dir/$program"
    done
    printf '#!/bin/sh\nexit 1\n' >"$dir/fail"
    chmod +x "$dir"/*
    mkdir -p "$dir/build" "$dir/home" "$dir/tmp"
    ln -s "$gantry" "$dir/build/gantry"
}

results=$scratch/results
: >"$results"
index=0
for document in "${documents[@]}"; do
    index=$((index + 1))
    dir=$scratch/$index
    mkdir -p "$dir/expected" "$dir/out"
    make_fixtures "$dir"
    if [[ $document == help:* ]]; then
        # shellcheck disable=SC2086 # "R encode" is two words
        "$gantry" ${document#help:} --help >"$dir/source" || {
            echo "FAIL $document: --help exits $?" >>"$results"
            continue
        }
        format=help
    else
        cp "$source_dir/$document" "$dir/source"
        format=markdown
    fi
    awk -v format="$format" -v name="$document" -v expected_dir="$dir/expected" \
        -f "$here/extract_examples.awk" "$dir/source" >"$dir/examples.sh"
    grep -q '^__example\|^__skip' "$dir/examples.sh" || continue

    # The commands that talk to an instance get one in their --help; a
    # markdown document asks for one with <!-- example: instance -->.
    uri=
    if [[ $document =~ ^help:($instance_commands)$ ]] ||
        grep -q '^<!-- example: instance -->$' "$dir/source"; then
        uri=$(cd "$dir" && env -u GANTRY_URI HOME="$dir/home" TMPDIR="$dir/tmp" "$gantry" start --daemon) || {
            echo "FAIL $document: gantry start --daemon exits $?" >>"$results"
            continue
        }
    fi
    (
        cd "$dir" || exit 1
        export HOME=$dir/home TMPDIR=$dir/tmp PATH=$(dirname "$gantry"):$PATH
        unset GANTRY_URI
        [[ -n $uri ]] && export GANTRY_URI=$uri
        export __results=$results __host=$host __user=$user __uid=$(id -u) __cores=$cores __here=$here
        export __out_dir=$dir/out
        start=$SECONDS
        timeout 30 bash --norc -c 'source "$__here/examples_lib.sh"; source ./examples.sh'
        (($? == 124)) && echo "FAIL $document: the examples did not end within 30 s" >>"$results"
        echo "time $document: $((SECONDS - start)) s" >>"$results"
    )
    [[ -n $uri ]] && env -u GANTRY_URI "$gantry" shutdown --force --uri "$uri" >/dev/null 2>&1
done

ran=$(grep -c '^ok \|^FAIL .*:[0-9]*: ' "$results")
passed=$(grep -c '^ok ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^skip ' "$results")
echo "slowest documents:" $(grep '^time ' "$results" | sort -t: -k2 -n -r | head -3 | sed 's/^time //; s/ s$/ s;/')
if ((skipped > 0)); then
    echo "not run ($skipped):"
    grep '^skip ' "$results" | sed 's/^skip /  /'
fi
if ((failed > 0)); then
    grep -v '^ok \|^skip \|^time ' "$results"
fi
echo "$ran examples run, $passed passed, $failed failed; $skipped not run"
((failed == 0 && ran > 0))
