#!/bin/bash
# nhens_bench's command line: --help prints the usage and every option on stdout and exits 0 without
# measuring; an unknown argument, an option without its value or --only with another value than lockstep exits
# 2 at once with a message naming it.
# Usage: bench_arguments.sh NHENS_BENCH
set -uo pipefail
bench=$1 failed=0
help=$(timeout 5 "$bench" --help 2>/dev/null)
status=$?
for option in --quick --only --check --write-baseline --help; do
    if [ $status -ne 0 ] || [[ $help != *"usage: nhens_bench"* ]] || [[ $help != *"$option "* ]]; then
        echo "FAIL --help: exit $status, option $option not described: $help"
        failed=1
    fi
done
for args in "--bogus" "--check" "--write-baseline" "--quick --frobnicate" "--only" "--only everything"; do
    last=${args##* }
    message=$(timeout 5 "$bench" $args 2>&1 >/dev/null)
    status=$?
    if [ $status -ne 2 ] || [[ $message != *"'$last'"* ]] || [[ $message != *"usage: nhens_bench"* ]]; then
        echo "FAIL $args: exit $status, message: $message"
        failed=1
    fi
done
[ $failed = 0 ] && echo "help and bad arguments handled before measuring"
exit $failed
