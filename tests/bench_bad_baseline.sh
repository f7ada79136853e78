#!/bin/bash
# nhens_bench --check refuses a bad baseline at once (exit 2, a message naming the file and what is
# allowed), before it measures anything: a missing file, a file that is not JSON, ratios that are not
# positive numbers, targets that are not positive numbers or name no ratio of the baseline or a speed-up.
# And the guard fails on a doctored baseline: with impossible lockstep targets (nhens within 0.01x the lockstep
# loop on the quartic and the CVT) `--quick --only lockstep --check` exits 1 naming exactly those ratios, while
# a lockstep ratio of the same run with a loose baseline passes. With --refusals-only (the sanitizer build,
# whose timings mean nothing) only the refusals are checked.
# Usage: bench_bad_baseline.sh NHENS_BENCH [--refusals-only]
set -uo pipefail
bench=$1 dir=$(mktemp -d) failed=0 refusals_only=${2:-}
trap 'rm -rf "$dir"' EXIT
printf 'not json\n' >"$dir/text.json"
printf '{"ratios": {"over_bare_loop:dla01": "fast"}}\n' >"$dir/string.json"
printf '{"ratios": {"over_bare_loop:dla01": -1}}\n' >"$dir/negative.json"
printf '{"about": "no ratios"}\n' >"$dir/none.json"
printf '{"ratios": {"over_lockstep:dla01": 5}, "targets": {"over_lockstep:dla01": 0}}\n' >"$dir/zero_target.json"
printf '{"ratios": {"over_lockstep:dla01": 5}, "targets": {"over_lockstep:lf": 1.5}}\n' >"$dir/stray_target.json"
printf '{"ratios": {"speedup_2_threads:dla01": 1.6}, "targets": {"speedup_2_threads:dla01": 1.9}}\n' >"$dir/speedup_target.json"
for case in "$dir/missing.json:cannot read" "$dir/text.json:is not a baseline" "$dir/string.json:is not a baseline" \
            "$dir/negative.json:is not a baseline" "$dir/none.json:is not a baseline" \
            "$dir/zero_target.json:is not a baseline" "$dir/stray_target.json:is not a baseline" \
            "$dir/speedup_target.json:is not a baseline"; do
    file=${case%%:*} expected=${case#*:}
    start=$SECONDS
    message=$(timeout 20 "$bench" --quick --check "$file" 2>&1 >/dev/null)
    status=$?
    if [ $status -ne 2 ] || [[ $message != *"$file"*"$expected"* && $message != *"$expected"*"$file"* ]] \
       || [ $((SECONDS - start)) -gt 2 ]; then
        echo "FAIL $file: exit $status after $((SECONDS - start)) s, message: $message"
        failed=1
    fi
done
if [ "$refusals_only" = --refusals-only ]; then
    [ $failed = 0 ] && echo "bad baselines refused before measuring"
    exit $failed
fi
# The doctored baseline: two impossible targets (0.01, and baselines of 0.01: the bound is 0.0125), one ratio with a
# bound no run reaches (100, target 1.5: the bound is 125).
printf '{"ratios": {"over_lockstep:dla01": 0.01, "over_lockstep_cvt:rk4": 0.01, "over_lockstep:lf": 100},
 "targets": {"over_lockstep:dla01": 0.01, "over_lockstep_cvt:rk4": 0.01, "over_lockstep:lf": 1.5}}\n' >"$dir/doctored.json"
message=$(timeout 900 "$bench" --quick --only lockstep --check "$dir/doctored.json" 2>&1 >"$dir/doctored_out.json")
status=$?
regressions=$(grep -o 'regression: [a-z_]*:[a-z0-9]*' <<<"$message" | sort | tr '\n' ' ')
if [ $status -ne 1 ] || [ "$regressions" != "regression: over_lockstep:dla01 regression: over_lockstep_cvt:rk4 " ]; then
    echo "FAIL the doctored baseline: exit $status (expected 1), regressions '$regressions' (expected over_lockstep:dla01 and over_lockstep_cvt:rk4 only), message: $message"
    failed=1
fi
[ $failed = 0 ] && echo "bad baselines refused before measuring; the doctored one fails the check"
exit $failed
