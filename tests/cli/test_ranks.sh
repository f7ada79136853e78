#!/usr/bin/env bash
# Byte identity beyond one process: a run computed whole, as 3 shards merged in shuffled order, as 1 shard,
# and (when built with MPI) under mpirun -n 1, 2 and 3 gives the same timeseries.csv, quantiles.csv,
# paths.csv and trajectories.csv (--reduce) bytes, and the same summary.json apart from the command, threads, ranks and timing. 2101 trajectories
# are 263 blocks in 256 chunks, so chunks of one and two blocks both occur. Also: merge refuses a missing,
# repeated or foreign shard by name. Ends with "N passed, N failed".
set -u
nhens="$1"; mpi="${2:-OFF}"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }
common=(--system quartic --param n=2 --method dla01 --h 0.1 --T 6 --every 3 --energy 3.2575 --ensemble 2101
        --paths 3 --reduce 'final,max:dH,min:constraint,first:dH<-1e-4' --quiet)
run_args=("${common[@]}" --seed 77)
strip() { grep -v -E '"(command|threads|ranks|rank_wall_seconds|rank_steps|wall_seconds|method_seconds|reference_seconds|ns_per_step|steps_per_second|peak_rss_kib)"' "$1"; }
same_outputs() { # $1 reference folder, $2 folder, $3 label
  local f
  for f in timeseries.csv quantiles.csv paths.csv trajectories.csv; do
    cmp -s "$1/$f" "$2/$f" || { bad "$3: $f differs"; return; }
  done
  diff <(strip "$1/summary.json") <(strip "$2/summary.json") >/dev/null || { bad "$3: summary.json differs"; return; }
  ok
}

"$nhens" run "${run_args[@]}" --threads 2 --out "$out/whole" >/dev/null || bad "whole run"
for i in 1 2 3; do "$nhens" run "${run_args[@]}" --threads 1 --blocks $i/3 --out "$out/parts" >/dev/null || bad "shard $i"; done
"$nhens" merge "$out/parts/part-2-of-3.json" "$out/parts/part-3-of-3.json" "$out/parts/part-1-of-3.json" \
  --out "$out/merged3" --quiet || bad "merge of 3"
same_outputs "$out/whole" "$out/merged3" "3 shards merged"
"$nhens" run "${run_args[@]}" --blocks 1/1 --out "$out/one" >/dev/null && "$nhens" merge "$out/one/part-1-of-1.json" \
  --out "$out/merged1" --quiet || bad "1 shard"
same_outputs "$out/whole" "$out/merged1" "1 shard merged"

expect_refusal() { # $1 label, $2 text the message must contain, then the merge arguments
  local label="$1" text="$2"; shift 2
  if "$nhens" merge "$@" --out "$out/refused" 2>"$out/err" >/dev/null; then bad "$label: accepted";
  elif ! grep -q -- "$text" "$out/err"; then bad "$label: message '$(cat "$out/err")' lacks '$text'";
  elif [ -e "$out/refused/summary.json" ]; then bad "$label: wrote outputs"; else ok; fi
}
expect_refusal "missing shard" "missing chunks 85 to 169" "$out/parts/part-1-of-3.json" "$out/parts/part-3-of-3.json"
expect_refusal "repeated shard" "repeated chunks" "$out/parts/part-1-of-3.json" "$out/parts/part-1-of-3.json" \
  "$out/parts/part-2-of-3.json" "$out/parts/part-3-of-3.json"
"$nhens" run "${common[@]}" --seed 78 --blocks 2/3 --out "$out/foreign" >/dev/null
expect_refusal "foreign shard" "another configuration" "$out/parts/part-1-of-3.json" "$out/foreign/part-2-of-3.json" \
  "$out/parts/part-3-of-3.json"
expect_refusal "not a partial result" "is not an nhens partial-result" "$out/whole/summary.json"

if [ "$mpi" = ON ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  # Open MPI's own allocations at MPI_Init outlive MPI_Finalize: LeakSanitizer would report them, not ours
  # (the same code runs leak-checked without MPI above)
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  for k in 1 2 3; do
    if mpirun --oversubscribe -n $k "$nhens" run "${run_args[@]}" --threads 1 --out "$out/mpi$k" >"$out/mpi$k.log" 2>&1; then
      same_outputs "$out/whole" "$out/mpi$k" "mpirun -n $k"
    else bad "mpirun -n $k: $(tail -5 "$out/mpi$k.log")"; fi
  done
  # summary.json records the ranks and each rank's timing
  grep -q -P '"ranks":\t3,' "$out/mpi3/summary.json" && grep -q '"rank_wall_seconds"' "$out/mpi3/summary.json" \
    && grep -q -P '"ranks":\t1,' "$out/whole/summary.json" && ok || bad "summary.json lacks the ranks or their timing"
  # only rank 0 prints the summary
  [ "$(grep -c '^nhens run:' "$out/mpi3.log")" = 1 ] && ok || bad "mpirun -n 3 printed $(grep -c '^nhens run:' "$out/mpi3.log") summaries"
  # an experiment under mpirun: every run's CSV files are the one-process report's bytes
  exp="$(dirname "$0")/../../experiments/modin2020/fig8_latitude.ini"
  "$nhens" report "$exp" --out "$out/report1" --scale 0.01 --threads 1 >/dev/null 2>&1 || bad "report, one process"
  if mpirun --oversubscribe -n 2 "$nhens" report "$exp" --out "$out/report2" --scale 0.01 --threads 1 \
       >"$out/report2.log" 2>&1; then
    differ=0
    for f in $(cd "$out/report1" && find . -name '*.csv'); do cmp -s "$out/report1/$f" "$out/report2/$f" || differ=$((differ + 1)); done
    n=$(cd "$out/report1" && find . -name '*.csv' | wc -l)
    [ "$differ" = 0 ] && [ "$n" -gt 10 ] && [ -s "$out/report2/report.md" ] && ok || bad "report under mpirun -n 2: $differ of $n CSV files differ"
  else bad "report under mpirun -n 2: $(tail -5 "$out/report2.log")"; fi
  if mpirun --oversubscribe -n 2 "$nhens" run "${run_args[@]}" --blocks 1/2 --out "$out/mpiblocks" >"$out/err" 2>&1; then
    bad "--blocks under mpirun accepted"
  else grep -q "for single processes" "$out/err" && ok || bad "--blocks under mpirun: $(cat "$out/err")"; fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
