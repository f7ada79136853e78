#!/usr/bin/env bash
# The documents cannot rot: every shell block marked runnable (a fence with the info string `sh runnable`)
# in README.md, docs/guide/*.md and docs/reference/*.md is run; every block that names a file (info string
# `LANG file=PATH`) must equal that file of the repository, which a test compiles (tests/consumer/consumer.c);
# and every relative link must name a file of the repository.
#
# Usage: run_doc_blocks.sh NHENS SOURCE_DIR BUILD_DIR [FILE.md...]
#
# The convention the blocks are written for (stated in README.md): they run from the root of a source tree
# whose build is in build/, with `nhens` on the PATH. Here each file's blocks run, in order and in one
# shell each, in a scratch folder that holds experiments/, examples/, python/, tests/ and build/ (links to
# the real ones) and a `nhens` that is the build's program with one substitution, the documented small
# scale: `nhens report` runs at --scale 0.01 (in place of any --scale; with --ci or --dry-run as written).
# Everything else runs as written, so the runnable blocks are small by design. Ends with "N passed, N failed".
set -u
nhens="$1"; src="$2"; build="$3"; shift 3
[ $# -gt 0 ] || set -- "$src/README.md" "$src"/docs/guide/*.md "$src"/docs/reference/*.md
passed=0; failed=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/nhens-docs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$scratch/bin"
cat >"$scratch/bin/nhens" <<WRAPPER
#!/usr/bin/env bash
# nhens with the small scale of the documentation test: report runs at --scale 0.01 (--ci and --dry-run as written).
args=("\$@"); i=0
while [ "\$i" -lt \${#args[@]} ] && [[ "\${args[\$i]}" == --plugin* ]]; do
  if [ "\${args[\$i]}" = --plugin ]; then i=\$((i + 2)); else i=\$((i + 1)); fi
done
if [ "\${args[\$i]:-}" = report ] && [[ " \$* " != *" --ci "* && " \$* " != *" --dry-run "* ]]; then
  small=()
  for ((j = 0; j < \${#args[@]}; ++j)); do
    case "\${args[\$j]}" in
      --scale) j=\$((j + 1)) ;;
      --scale=*) ;;
      *) small+=("\${args[\$j]}") ;;
    esac
  done
  args=("\${small[@]}" --scale 0.01)
fi
exec "$nhens" "\${args[@]}"
WRAPPER
chmod +x "$scratch/bin/nhens"

check_links() { # $1 Markdown file: every [text](target) that is not a URL or an anchor names a file
  local file="$1" dir target path
  dir=$(dirname "$file")
  while IFS= read -r target; do
    path="${target%%#*}"
    case "$target" in http://*|https://*|mailto:*|'#'*) continue ;; esac
    [ -z "$path" ] && continue
    if [ -e "$dir/$path" ]; then passed=$((passed + 1));
    else echo "FAILED: ${file#"$src"/} links to '$target', which is not in the repository"; failed=$((failed + 1)); fi
  done < <(grep -o '\](\([^)]*\))' "$file" | sed 's/^](\(.*\))$/\1/')
}

check_copies() { # $1 Markdown file: each block fenced as ```LANG file=PATH equals the file PATH
  local file="$1" copy target out
  out="$scratch/copies-$(basename "$file" .md)"; mkdir -p "$out"
  awk -v out="$out" '
    match($0, /^```[a-z]+ file=/) { n++; inside = 1; f = sprintf("%s/%03d", out, n); print substr($0, RLENGTH + 1) > f; next }
    inside && /^```[ \t]*$/ { inside = 0; close(f); next }
    inside { print > f }' "$file"
  for copy in "$out"/*; do
    [ -e "$copy" ] || break
    target=$(head -1 "$copy")
    if tail -n +2 "$copy" | cmp -s - "$src/$target"; then passed=$((passed + 1));
    else echo "FAILED: ${file#"$src"/} quotes $target, but its block differs from the file"; failed=$((failed + 1)); fi
  done
}

run_blocks() { # $1 Markdown file: its runnable blocks, in order, in a fresh scratch folder
  local file="$1" name work n=0 line
  name=$(basename "$file" .md)
  work="$scratch/$name"; mkdir -p "$work/blocks"
  for d in experiments examples python tests; do ln -s "$src/$d" "$work/$d"; done
  ln -s "$build" "$work/build"
  awk -v out="$work/blocks" '
    /^```sh runnable[ \t]*$/ { n++; inside = 1; f = sprintf("%s/%03d.sh", out, n); print "# " FILENAME ":" NR + 1 > f; next }
    inside && /^```[ \t]*$/ { inside = 0; close(f); next }
    inside { print > f }' "$file"
  for block in "$work"/blocks/*.sh; do
    [ -e "$block" ] || break
    n=$((n + 1)); line=$(head -1 "$block" | sed 's/^# //; s|^'"$src"'/||')
    if (cd "$work" && PATH="$scratch/bin:$PATH" OMP_NUM_THREADS=2 timeout 60 bash -euo pipefail "$block") \
         >"$block.log" 2>&1; then
      passed=$((passed + 1))
    else
      echo "FAILED: the block at $line (exit $?):"; sed 's/^/    /' "$block"; echo "  output:"; tail -20 "$block.log" | sed 's/^/    /'
      failed=$((failed + 1))
    fi
  done
  echo "$name.md: $n runnable blocks"
}

for file in "$@"; do
  check_links "$file"
  check_copies "$file"
  run_blocks "$file"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
