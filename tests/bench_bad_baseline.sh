#!/bin/bash
# nhens_bench --check refuses a bad baseline at once (exit 2, a message naming the file and what is
# allowed), before it measures anything: a missing file, a file that is not JSON, ratios that are not
# positive numbers. Usage: bench_bad_baseline.sh NHENS_BENCH
set -uo pipefail
bench=$1 dir=$(mktemp -d) failed=0
trap 'rm -rf "$dir"' EXIT
printf 'not json\n' >"$dir/text.json"
printf '{"ratios": {"over_bare_loop:dla01": "fast"}}\n' >"$dir/string.json"
printf '{"ratios": {"over_bare_loop:dla01": -1}}\n' >"$dir/negative.json"
printf '{"about": "no ratios"}\n' >"$dir/none.json"
for case in "$dir/missing.json:cannot read" "$dir/text.json:is not a baseline" "$dir/string.json:is not a baseline" \
            "$dir/negative.json:is not a baseline" "$dir/none.json:is not a baseline"; do
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
[ $failed = 0 ] && echo "bad baselines refused before measuring"
exit $failed
