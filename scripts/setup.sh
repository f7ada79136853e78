#!/usr/bin/env bash
# Install nhens' Debian dependencies if any is missing, build SUNDIALS from Debian's source with
# optimisation into ./.deps (scripts/sundials.sh), then configure and build into ./build
# (and, called with --asan, ./build-asan with -fsanitize=address,undefined and ./build-clang with clang, all
# three with -Werror).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES="build-essential cmake pkg-config libsundials-dev libcriterion-dev libpcg-cpp-dev libcjson-dev libinih-dev gnuplot-nox
  libopenmpi-dev openmpi-bin python3-numpy python3-matplotlib python3-jsonschema python3-mpmath python3-sympy
  python3-pytest python3-venv python3-pip python3-setuptools strace help2man"
# the tests also build with clang (and fuzz with its libFuzzer), and load report.html in a headless chromium
[ "${1:-}" = "--asan" ] && PACKAGES="$PACKAGES clang libomp-dev libclang-rt-14-dev chromium"
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
# The test set-up (--asan) holds every build to zero warnings (-Werror), with gcc and with clang.
werror=OFF
[ "${1:-}" = "--asan" ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNHENS_WERROR=$werror >/dev/null
cmake --build build -j "$jobs" >/dev/null
if [ "${1:-}" = "--asan" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNHENS_SANITIZE=ON -DNHENS_WERROR=ON >/dev/null
  cmake --build build-asan -j "$jobs" >/dev/null
  # clang checks the warnings of every source; the lane kernels' source once (sse2), not once per instruction set
  CC=clang CXX=clang++ cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DNHENS_WERROR=ON -DNHENS_LANE_ISAS=sse2 >/dev/null
  cmake --build build-clang -j "$jobs" >/dev/null
fi
