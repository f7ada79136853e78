#!/bin/bash
# The shared library exports its public API and nothing else: every function and object declared in
# include/nhens/*.h is a defined dynamic symbol of libnhens, and every defined dynamic symbol is one of
# them (or a sanitizer build's __odr_asan.* marker). A named OpenMP critical section (.gomp_critical_user_*)
# is refused by name: it is one lock for the whole process, so two runs in one process would wait for each
# other; the engine's locks belong to the run.
# Usage: exports.sh LIBRARY INCLUDE_DIR
set -euo pipefail
lib=$1 include=$2
declared=$(grep -hoE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]nh_[a-z0-9_]+\(' "$include"/nhens/*.h \
             | grep -vE '^(static|typedef)' | grep -oE 'nh_[a-z0-9_]+\($' | tr -d '('
           grep -hoE '^extern [A-Za-z0-9_ *]+[ *]nh_[a-z0-9_]+ *[[;]' "$include"/nhens/*.h \
             | grep -oE 'nh_[a-z0-9_]+ *[[;]$' | tr -d ' [;')
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ {print $3}' | grep -vE '^(_init|_fini|__odr_asan\..*)$')
critical=$(grep '^\.gomp_critical_user_' <<<"$exported" || true)
[ -z "$critical" ] || echo "named OpenMP critical sections (process-wide locks; use the run's own):" $critical
missing=$(comm -23 <(sort -u <<<"$declared") <(sort -u <<<"$exported"))
leaked=$(comm -13 <(sort -u <<<"$declared") <(sort -u <<<"$exported"))
[ -z "$missing" ] || echo "declared in a public header but not exported:" $missing
[ -z "$leaked" ] || echo "exported but not declared in a public header:" $leaked
[ -z "$missing$leaked$critical" ] || exit 1
echo "exports: $(wc -l <<<"$declared") public symbols, nothing else"
