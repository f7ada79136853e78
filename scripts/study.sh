#!/usr/bin/env bash
# Set up (if needed), build, and run the default ensemble study: 200 trajectories of the chaotic
# quartic (n = 3) on the energy shell H = 3.06 with DLA^{0,1}, h = 0.1, T = 1000 (Celledoni et al. 2019, Fig. 2).
# Extra arguments are passed to `nhens run` (e.g. --method dd, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec ./build/nhens run --system quartic --param n=3 --method dla01 --energy 3.06 --ensemble 200 \
  --h 0.1 --T 1000 --seed 1 --out results/default-study "$@"
