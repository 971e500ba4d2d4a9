#!/bin/sh
# Runs every libFuzzer target for SECONDS each, seeded from fuzz/corpus and
# the conformance vectors. Usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -eu
build=$1
seconds=$2
vectors=${GANTRY_VECTORS:-../shared/vectors}
status=0
for target in "$build"/fuzz/*_fuzz; do
    name=$(basename "$target" _fuzz)
    corpus="$build/corpus/$name"
    mkdir -p "$corpus"
    if [ -d "$vectors" ]; then
        "$build"/fuzz/seed_corpus "$vectors" "$build/corpus" "$name"
    else
        echo "*** conformance vectors not found: fuzzing from fuzz/corpus only ***"
    fi
    echo "fuzz: $name for ${seconds}s"
    if ! "$target" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$build/crash-$name-" "$corpus" "fuzz/corpus/$name"; then
        echo "fuzz: $name FAILED (artifacts in $build/)"
        status=1
    fi
done
exit $status
