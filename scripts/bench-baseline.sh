#!/usr/bin/env bash
# Refresh bench/baseline.json from one `nhens_bench --quick` run (the ratios it guards). Run it on the
# machine CI runs on, after a change that makes nhens faster (or knowingly slower), and commit the file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
./build/nhens_bench --quick --write-baseline bench/baseline.json.tmp >/dev/null
mv bench/baseline.json.tmp bench/baseline.json
echo "bench/baseline.json refreshed"
