#!/usr/bin/env bash
# Set up (if needed), build, and run the default ensemble study: 200 trajectories of the chaotic
# quartic (n = 3) on the energy shell H = 3.06 with DLA^{0,1}, h = 0.1, T = 1000 (Celledoni et al. 2019, Fig. 2).
# Extra arguments go to `nhens run` and replace the default of the option they name (e.g. --method dd,
# --out DIR, --seed 7); with --system the quartic's --param, --energy and --ensemble are left to you.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

given() { # whether the user's arguments name option $1 (as "--opt value" or "--opt=value")
  local a
  for a in "${user[@]}"; do [ "$a" = "$1" ] || [ "${a%%=*}" = "$1" ] && return 0; done
  return 1
}
user=("$@")
args=()
default() { given "$1" || args+=("$1" "$2"); }
if ! given --system; then
  args+=(--system quartic)
  given --param || args+=(--param n=3)
  default --energy 3.06
  default --ensemble 200
fi
default --method dla01
default --h 0.1
default --T 1000
default --seed 1
default --out results/default-study
exec ./build/nhens run "${args[@]}" "$@"
