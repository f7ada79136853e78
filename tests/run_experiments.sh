#!/usr/bin/env bash
# Every experiment file is valid at full size, runs at reduced size (--scale) with its ci claims holding,
# writes report.md (with its claims table) and one PNG and SVG per panel, and a second run reuses the results. Ends with the plain "N passed, N failed" line.
set -u
nhens="$1"; dir="$2"; scale="${3:-0.01}"
out=$(mktemp -d)
passed=0; failed=0
for exp in "$dir"/*.ini; do
  name=$(basename "$exp" .ini)
  # the file is valid at full size too (a horizon that is no whole number of steps shows only there), and
  # the claims marked ci hold at the small scale (--check-claims)
  if "$nhens" report "$exp" --out "$out/$name" --dry-run >/dev/null 2>"$out/$name.err" &&
     "$nhens" report "$exp" --out "$out/$name" --scale "$scale" --threads 2 --check-claims >/dev/null 2>"$out/$name.err" &&
     [ -s "$out/$name/report.md" ] && grep -q '^| `' "$out/$name/report.md" && grep -q '^## Claims' "$out/$name/report.md" &&
     [ "$(ls "$out/$name"/*.png | wc -l)" -ge 1 ] && [ "$(ls "$out/$name"/*.svg | wc -l)" -ge 1 ] &&
     ! find "$out/$name" -maxdepth 1 -name '*.png' -empty | grep -q . &&
     "$nhens" report "$exp" --out "$out/$name" --scale "$scale" 2>&1 >/dev/null | grep -q reused; then
    passed=$((passed + 1))
  else
    echo "experiment $name failed:"; cat "$out/$name.err"; failed=$((failed + 1))
  fi
done
# a run folder that lacks a file the report reads (results of an older nhens) is computed again, not reused
first=$(ls "$dir"/*.ini | head -1); name=$(basename "$first" .ini)
if "$nhens" report "$first" --out "$out/reuse" --scale "$scale" >/dev/null 2>&1 &&
   rm "$(find "$out/reuse" -name quantiles.csv | head -1)" &&
   "$nhens" report "$first" --out "$out/reuse" --scale "$scale" 2>&1 >/dev/null | grep running >/dev/null &&
   [ "$(find "$out/reuse" -name quantiles.csv | wc -l)" -eq "$(find "$out/reuse" -name summary.json | wc -l)" ]; then
  passed=$((passed + 1))
else
  echo "a run folder missing quantiles.csv was reused"; failed=$((failed + 1))
fi
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
