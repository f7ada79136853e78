#!/usr/bin/env bash
# Refresh bench/baseline.json from three `nhens_bench --quick` runs: each guarded and reported ratio is the median
# of the three (one run can be a low outlier, and the lockstep ratios' bound is 1.25x their baseline:
# docs/decisions/0021-lanes.md), the targets are nhens_bench's. Run it on the machine CI runs on, after a change
# that makes nhens faster (or knowingly slower), and commit the file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for run in 1 2 3; do
  ./build/nhens_bench --quick --write-baseline "$scratch/run$run.json" >/dev/null
done
python3 - "$scratch" bench/baseline.json.tmp <<'PY'
import json, statistics, sys
runs = [json.load(open(f"{sys.argv[1]}/run{k}.json")) for k in (1, 2, 3)]
out = dict(runs[0])
out["about"] += "; each ratio the median of three --quick runs (scripts/bench-baseline.sh)"
for part in ("ratios", "reported"):
    out[part] = {key: statistics.median(run[part][key] for run in runs if key in run[part])
                 for key in runs[0][part]}
def cjson(value, depth=0):
    """JSON in cJSON_Print's layout (tabs, a tab after each colon), as nhens_bench --write-baseline writes it."""
    pad = "\t" * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}:\t{cjson(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "\t" * depth + "}"
    return json.dumps(value)
with open(sys.argv[2], "w") as f:
    f.write(cjson(out) + "\n")
PY
mv bench/baseline.json.tmp bench/baseline.json
echo "bench/baseline.json refreshed (medians of three quick runs)"
