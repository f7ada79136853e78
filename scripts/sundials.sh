#!/usr/bin/env bash
# Build the parts of SUNDIALS that nhens uses (KINSOL, CVODE, the serial vector, the dense matrix and
# linear solver) with optimisation into .deps/sundials, from the source package of the installed
# libsundials-dev, found through the system's own apt sources. Debian compiles its binary packages without optimisation, which made KINSOL's own
# work cost more than a whole cheap step (docs/TOOLCHAIN.md). Same version, same source, same results
# bit for bit; CMakeLists.txt takes this build when it is there and Debian's otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$PWD/.deps/sundials"
version=$(dpkg-query -W -f='${source:Version}' libsundials-dev)
stamp="$prefix/built-from-debian-source-$version"
[ -f "$stamp" ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# The source index of the system's own apt sources: every deb entry of /etc/apt (one-line and deb822
# formats) read as a deb-src entry, in a list of our own, so the system's lists stay as they are. Without
# such a source (or without the network) the build keeps Debian's unoptimised binaries, and says so.
fallback() {
  echo "setup: $1; nhens uses Debian's SUNDIALS binaries, which are built without optimisation (KINSOL's" \
       "own work then costs more than a cheap step: docs/TOOLCHAIN.md)" >&2
  exit 0
}
parts="$work/sources.list.d"
mkdir -p "$parts"
: > "$work/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]\+/deb-src /p' "$f"
done > "$parts/system-src.list"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && { sed 's/^Types:.*/Types: deb-src/' "$f"; echo; }
done > "$parts/system-src.sources"
[ -s "$parts/system-src.list" ] || [ -s "$parts/system-src.sources" ] || fallback "no apt source is configured"
apt_options=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=$parts"
             -o APT::Get::List-Cleanup=0)
$SUDO apt-get "${apt_options[@]}" update -qq || fallback "apt-get update of the source index failed"
# apt checks the files against the signed index's hashes; dpkg-source applies Debian's patches.
(cd "$work" && apt-get "${apt_options[@]}" source --download-only -qq "sundials=$version" 2>/dev/null) \
  || fallback "the system's apt sources have no source package sundials=$version"
dpkg-source --no-check -x "$work"/sundials_*.dsc "$work/src" >/dev/null

cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix.tmp" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
  -DBUILD_KINSOL=ON -DBUILD_CVODE=ON -DBUILD_ARKODE=OFF -DBUILD_CVODES=OFF -DBUILD_IDA=OFF -DBUILD_IDAS=OFF \
  -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_INSTALL=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build "$work/build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
rm -rf "$prefix.tmp" "$prefix"
cmake --install "$work/build" >/dev/null
mv "$prefix.tmp" "$prefix"   # whole or absent
touch "$stamp"
echo "setup: built SUNDIALS $version from Debian's source with optimisation into $prefix" >&2
