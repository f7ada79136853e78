#!/bin/bash
# The shared library exports its public API and nothing else: every function and object declared in
# include/nhens/*.h is a defined dynamic symbol of libnhens, and every defined dynamic symbol is one of
# them (or an OpenMP named critical section of the library's own, .gomp_critical_user_nh_*, or a sanitizer
# build's __odr_asan.* marker).
# Usage: exports.sh LIBRARY INCLUDE_DIR
set -euo pipefail
lib=$1 include=$2
declared=$(grep -hoE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]nh_[a-z0-9_]+\(' "$include"/nhens/*.h \
             | grep -vE '^(static|typedef)' | grep -oE 'nh_[a-z0-9_]+\($' | tr -d '('
           grep -hoE '^extern [A-Za-z0-9_ *]+[ *]nh_[a-z0-9_]+ *[[;]' "$include"/nhens/*.h \
             | grep -oE 'nh_[a-z0-9_]+ *[[;]$' | tr -d ' [;')
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ {print $3}' | grep -v '^\.gomp_critical_user_nh_' \
           | grep -vE '^(_init|_fini|__odr_asan\..*)$')
missing=$(comm -23 <(sort -u <<<"$declared") <(sort -u <<<"$exported"))
leaked=$(comm -13 <(sort -u <<<"$declared") <(sort -u <<<"$exported"))
[ -z "$missing" ] || echo "declared in a public header but not exported:" $missing
[ -z "$leaked" ] || echo "exported but not declared in a public header:" $leaked
[ -z "$missing$leaked" ] || exit 1
echo "exports: $(wc -l <<<"$declared") public symbols, nothing else"
