#!/usr/bin/env bash
# Install the build tree into a scratch prefix and build tests/consumer against it both ways a user
# would: CMake (find_package(nhens), shared and static) and pkg-config (shared and --static). Each
# consumer runs a small ensemble through the public API and must exit 0; the installed nhens must run.
# usage: install_consumer.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/nhens" --version
# the soname is the ABI version of core.h, and the installed link names it
abi=$(sed -n 's/^#define NH_ABI_VERSION \([0-9]*\)$/\1/p' "$prefix/include/nhens/core.h")
soname=$(objdump -p "$(find "$prefix" -name libnhens.so | head -1)" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libnhens.so.$abi" ] || { echo "install_consumer: soname $soname, expected libnhens.so.$abi"; exit 1; }
# CITATION.cff cites the version being installed
version=$("$prefix/bin/nhens" --version | awk '{print $2}')
grep -qx "version: \"$version\"" "$prefix"/share/doc/nhens/CITATION.cff \
  || { echo "install_consumer: CITATION.cff does not cite version $version"; exit 1; }

cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
"$work/cmake-build/consumer_static"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir nhens)
cc -std=c17 -Wall -Wextra -Werror -o "$work/consumer_pc" "$here/consumer/consumer.c" \
  $(pkg-config --cflags --libs nhens) -Wl,-rpath,"$libdir" -lm
"$work/consumer_pc"
# static: libnhens.a itself, then everything `pkg-config --static` says it needs (Libs.private)
cc -std=c17 -Wall -Wextra -Werror -o "$work/consumer_pc_static" "$here/consumer/consumer.c" \
  $(pkg-config --cflags nhens) "$libdir/libnhens.a" $(pkg-config --static --libs nhens | sed 's/-lnhens / /')
"$work/consumer_pc_static"
# The static consumers run the SUNDIALS the shared library carries: when libnhens.so needs no libsundials_*.so
# (it holds the optimised build of scripts/sundials.sh), libnhens.a holds those objects too and no static
# consumer loads Debian's libsundials_*.so; with Debian's SUNDIALS, both name it.
if ! objdump -p "$libdir/libnhens.so" | grep 'NEEDED.*libsundials' >/dev/null; then
  nm "$libdir/libnhens.a" 2>/dev/null | grep ' T KINSol$' >/dev/null \
    || { echo "install_consumer: libnhens.so carries SUNDIALS and libnhens.a does not"; exit 1; }
  for exe in "$work/cmake-build/consumer_static" "$work/consumer_pc_static"; do
    if ldd "$exe" | grep libsundials >/dev/null; then
      echo "install_consumer: $(basename "$exe") loads Debian's SUNDIALS, and libnhens.a carries the optimised one:"
      ldd "$exe" | grep libsundials
      exit 1
    fi
  done
  ! grep -q sundials "$libdir/pkgconfig/nhens.pc" || { echo "install_consumer: nhens.pc names SUNDIALS, which libnhens.a carries"; exit 1; }
  echo "install_consumer: the static consumers run libnhens.a's own (optimised) SUNDIALS"
fi
echo "install_consumer: all four consumers passed"
