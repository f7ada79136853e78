#!/usr/bin/env bash
# Fuzz the experiment-file loader and the command-line parser with libFuzzer (clang, ASan + UBSan).
# usage: scripts/fuzz.sh [SECONDS_PER_HARNESS (default 60)] [HARNESS ...]
# Builds ./build-fuzz, seeds each corpus (experiments/, tests/cli/hostile/, the command lines of
# tests/cli/bad_inputs.tsv), runs each harness for the given time and fails on any crash, hang (10 s per
# input), leak or sanitizer report; what a harness finds is kept in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=${*:-"fuzz_experiment fuzz_cli"}

for p in clang libclang-rt-14-dev libomp-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "fuzz: installing$missing" >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNHENS_FUZZ=ON -DNHENS_TESTS=OFF \
  -DNHENS_STACK_USAGE=OFF -DNHENS_LANE_ISAS=sse2 >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target $harnesses >/dev/null

corpus=build-fuzz/corpus
rm -rf build-fuzz/artifacts
mkdir -p "$corpus/fuzz_experiment" "$corpus/fuzz_cli" build-fuzz/artifacts
cp experiments/*/*.ini tests/cli/hostile/*.ini "$corpus/fuzz_experiment/"
# a command line seed: the subcommand's index byte (6 = run --dry-run), then one argument per line
i=0
while IFS=$'\t' read -r code expect args; do
  case "$code" in ''|\#*) continue ;; esac
  set -f; read -r -a words <<<"$args"; set +f
  [ "${words[0]:-}" = run ] || continue
  { printf '\006'; printf '%s\n' "${words[@]:1}" | head -c -1; } >"$corpus/fuzz_cli/table-$i"
  i=$((i + 1))
done <tests/cli/bad_inputs.tsv
printf '\006--system\nquartic\n--method\ndla\n--h\n0.01\n--T\n1\n--energy\n1' >"$corpus/fuzz_cli/good-run"
printf '\001--system\ncvt\n--method\nlf\n--T\n2\n--h-list\n0.1,0.05' >"$corpus/fuzz_cli/good-order"

status=0
for h in $harnesses; do
  echo "fuzz: $h for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    "build-fuzz/fuzz/$h" "$corpus/$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
    -artifact_prefix=build-fuzz/artifacts/$h- -print_final_stats=1 2>"build-fuzz/$h.log" || status=1
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|ERROR|SUMMARY" "build-fuzz/$h.log" || true
  if ls build-fuzz/artifacts/$h-* >/dev/null 2>&1; then status=1; ls build-fuzz/artifacts/$h-*; fi
  [ $status -eq 0 ] || { echo "fuzz: $h FAILED (build-fuzz/$h.log)"; tail -40 "build-fuzz/$h.log"; }
done
exit $status
