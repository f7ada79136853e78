#!/usr/bin/env bash
# Install nhens' Debian dependencies if any is missing, build SUNDIALS from Debian's source with
# optimisation into ./.deps (scripts/sundials.sh), then configure and build into ./build
# (and ./build-asan with -fsanitize=address,undefined when called with --asan).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES="build-essential cmake pkg-config libsundials-dev libcriterion-dev libpcg-cpp-dev libcjson-dev libinih-dev gnuplot-nox
  libopenmpi-dev openmpi-bin python3-numpy python3-matplotlib python3-jsonschema help2man"
missing=""
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq $missing >/dev/null
fi

# SUNDIALS built with optimisation from Debian's own source package (scripts/sundials.sh; once).
bash scripts/sundials.sh

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs" >/dev/null
if [ "${1:-}" = "--asan" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNHENS_SANITIZE=ON >/dev/null
  cmake --build build-asan -j "$jobs" >/dev/null
fi
