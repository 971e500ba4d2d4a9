#!/bin/sh
# Checks (or with --fix, applies) clang-format on every C++ source.
set -eu
files=$(git ls-files '*.cpp' '*.h' 2>/dev/null || find src tests fuzz bench -name '*.cpp' -o -name '*.h')
[ -n "$files" ] || exit 0
if [ "${1:-}" = --fix ]; then
    clang-format -i $files
else
    clang-format --dry-run --Werror $files
    echo "format: clean"
fi
