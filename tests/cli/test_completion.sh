#!/usr/bin/env bash
# Bash completion (completions/nhens.bash) offers subcommands, options, systems, methods and presets asked of
# the program itself; the generated man page (when help2man built it) holds every subcommand's options.
# Ends with "N passed, N failed".
set -u
nhens="$1"; root="$2"; man_page="${3:-}"
passed=0; failed=0
# shellcheck source=/dev/null
source "$root/completions/nhens.bash"
expect() { # $1 word that must be offered, then the words typed (the last is completed)
  local want="$1"; shift
  COMP_WORDS=("$nhens" "$@"); COMP_CWORD=$#; COMPREPLY=()
  _nhens
  if printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$want"; then passed=$((passed + 1));
  else echo "FAILED: '$*' offers '${COMPREPLY[*]}', not '$want'"; failed=$((failed + 1)); fi
}
expect merge ""
expect run r
expect quartic run --system q
expect dla01 run --system quartic --method dla0
expect rotating run --preset rot
expect --blocks run --bl
expect --initial run --ini
expect --out merge --o
expect kinsol run --solver k
expect report help rep
expect dH run --observe d
expect --quiet order --qu
expect --quiet audit --qu
if [ -n "$man_page" ]; then
  text=$(MANWIDTH=200 man -l "$man_page" 2>/dev/null)
  for want in "nhens merge" "--blocks I/K" "--initial FILE" "--burn-in T0" "nhens report" "EXIT STATUS"; do
    if grep -qF -- "$want" <<<"$text"; then passed=$((passed + 1)); else echo "FAILED: man page lacks '$want'"; failed=$((failed + 1)); fi
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
