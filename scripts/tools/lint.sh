#!/usr/bin/env bash
# The style checks of pre-commit, for CI and for a tree without pre-commit installed:
# ruff (lint + format, config in pyproject.toml) and clang-format (config in .clang-format),
# at the versions .pre-commit-config.yaml pins (pip install -e '.[lint]').
#   scripts/tools/lint.sh          check; exit 1 and list the files on any difference
#   scripts/tools/lint.sh --fix    rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/../.."
fix=0; [ "${1:-}" = "--fix" ] && fix=1
for tool in ruff clang-format; do
    command -v "$tool" >/dev/null || { echo "lint: $tool not found (pip install -e '.[lint]')" >&2; exit 2; }
done
# Not formatted: stub fixtures and the specs' example programs (stored verbatim, compared with the specs).
mapfile -t cxx < <(git ls-files '*.h' '*.hpp' '*.cpp' '*.cc' | grep -Ev '^tests/(npu/fixtures|data/spec_examples)/')
rc=0
if [ $fix = 1 ]; then
    ruff check --fix --quiet . || rc=1
    ruff format --quiet .
    clang-format -i --style=file "${cxx[@]}"
else
    ruff check --quiet . || rc=1
    ruff format --check --quiet . || { echo "lint: ruff format would change the files above" >&2; rc=1; }
    clang-format --dry-run --Werror --style=file "${cxx[@]}" 2>/tmp/clang-format.$$ || {
        grep -o '^[^:]*:[0-9]*:[0-9]*: error' /tmp/clang-format.$$ | cut -d: -f1 | sort -u | sed 's/^/lint: clang-format would change /' >&2
        rc=1
    }
    rm -f /tmp/clang-format.$$
fi
[ $rc = 0 ] && echo "lint: clean (${#cxx[@]} C++ files, ruff)"
exit $rc
