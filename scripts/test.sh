#!/usr/bin/env bash
# Set up (if needed), build, and run the whole Criterion suite through CTest (one test per core) twice: on the release
# build and on a build with -fsanitize=address,undefined; then fuzz both input parsers briefly and check
# the benchmark ratios against bench/baseline.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --asan
echo "== test suite (release build)"
jobs=$(nproc 2>/dev/null || echo 2)
(cd build && ctest -j "$jobs" --output-on-failure)
echo "== test suite (address + undefined-behaviour sanitizers)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest -j "$jobs" --output-on-failure)
echo "== fuzzing: experiment-file loader and command-line parser, 30 s each (scripts/fuzz.sh)"
bash scripts/fuzz.sh 30
echo "== benchmark guard: ratios against bench/baseline.json (nhens_bench --quick --check)"
./build/nhens_bench --quick --check bench/baseline.json >build/bench.json
echo "bench: every ratio within its bound, max(target, 1.25 x baseline) (build/bench.json)"
