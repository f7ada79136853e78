#!/usr/bin/env bash
# No stack frame of libnhens over a limit (default 16 KB), from gcc -fstack-usage (.su files of the layer
# objects). Prints the largest frames; fails on any frame over the limit or any unbounded (dynamic) frame.
set -u
build="$1"; limit="${2:-16384}"
files=$(find "$build/CMakeFiles" -name '*.su' -path '*nhens_*.dir*')
[ -n "$files" ] || { echo "no .su files under $build (configure with -DNHENS_STACK_USAGE=ON)"; exit 1; }
cat $files | sort -t$'\t' -k2 -n -r | head -5
bad=$(cat $files | awk -F'\t' -v lim="$limit" '$2 > lim || $3 ~ /^dynamic$/ {print}')
if [ -n "$bad" ]; then echo "frames over $limit bytes or unbounded:"; echo "$bad"; exit 1; fi
echo "largest frame within $limit bytes"
