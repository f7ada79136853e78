#!/bin/bash
# docs/PERFORMANCE.md's benchmark table is bench/table.py's output for bench/baseline.json, and the check
# notices a table that is not: a baseline with one ratio changed must fail it, and so must a file without
# the generated block.
# Usage: bench_table.sh PYTHON SOURCE_DIR
set -uo pipefail
python=$1 src=$2 failed=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$src" || exit 1
if ! "$python" bench/table.py --check docs/PERFORMANCE.md bench/baseline.json; then
    echo "FAIL docs/PERFORMANCE.md is not generated from bench/baseline.json"
    failed=1
fi
sed 's/"over_bare_loop:dla01":\t[0-9.]*/"over_bare_loop:dla01":\t9.5/' bench/baseline.json >"$scratch/changed.json"
if cmp -s bench/baseline.json "$scratch/changed.json"; then
    echo "FAIL the mutation did not change the baseline (over_bare_loop:dla01 not found)"
    failed=1
elif "$python" bench/table.py --check docs/PERFORMANCE.md "$scratch/changed.json" 2>/dev/null; then
    echo "FAIL --check passed a table that is not the baseline's"
    failed=1
fi
grep -v '^<!-- end of generated table -->$' docs/PERFORMANCE.md >"$scratch/no_block.md"
if "$python" bench/table.py --check "$scratch/no_block.md" bench/baseline.json 2>/dev/null; then
    echo "FAIL --check passed a document without its generated block"
    failed=1
fi
[ $failed -eq 0 ] && echo "benchmark table: generated from bench/baseline.json"
exit $failed
