#!/usr/bin/env bash
# include/nhens/nhens.h includes every other public header: a user who includes it sees the whole API.
set -euo pipefail
dir="$1"
missing=0
for h in "$dir"/*.h; do
  name=$(basename "$h")
  [ "$name" = nhens.h ] && continue
  if ! grep -q "^#include \"nhens/$name\"" "$dir/nhens.h"; then
    echo "nhens.h does not include nhens/$name"
    missing=$((missing + 1))
  fi
done
echo "nhens.h: $missing public headers missing"
[ "$missing" -eq 0 ]
