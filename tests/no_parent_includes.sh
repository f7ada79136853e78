#!/usr/bin/env bash
# No source of the tree includes a file by a relative parent path ("../x.h"): include folders are set in
# CMake, so a file's includes do not depend on where it sits. Prints the offending lines and fails on any.
set -u
root="$1"
grep -rEn --include='*.c' --include='*.h' --include='*.cpp' --include='*.in' \
  '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*\.\./' \
  "$root"/base "$root"/solvers "$root"/systems "$root"/methods "$root"/stats "$root"/engine "$root"/cli \
  "$root"/include "$root"/tests "$root"/bench "$root"/fuzz "$root"/examples "$root"/python
status=$?
[ "$status" -eq 1 ] && echo "no relative parent includes"
[ "$status" -eq 1 ]
