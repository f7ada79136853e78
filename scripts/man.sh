#!/usr/bin/env bash
# The nhens(1) man page from the program's own help (help2man): the general usage, then one section per
# subcommand with `nhens help COMMAND`. Usage: scripts/man.sh PATH/TO/nhens OUT.1
set -euo pipefail
nhens="$1"; out="$2"
include=$(mktemp); trap 'rm -f "$include"' EXIT
{
  echo "[COMMANDS]"
  for c in $("$nhens" list --names commands); do
    echo ".SS \"nhens $c\""
    echo ".nf"
    "$nhens" help "$c" | sed 's/\\/\\\\/g; s/^\./\\\&./'
    echo ".fi"
  done
  cat <<'TEXT'
[FILES]
DIR/timeseries.csv, DIR/summary.json, DIR/quantiles.csv, DIR/paths.csv, DIR/smoothed.csv: the outputs of a run
(summary.json follows docs/schema/summary.schema.json); DIR/part\-I\-of\-K.json: a shard's partial result
(docs/schema/partial.schema.json), joined by nhens merge.
[ENVIRONMENT]
Under mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE set) the ranks share every ensemble; outputs are
byte\-identical to one process.
[EXIT STATUS]
0 success; 1 an error (an output that cannot be written); 2 bad input (the message names the value and
what is allowed); 3 some trajectories failed (counted in summary.json); 4 a claim of an experiment failed;
130/143 interrupted by SIGINT/SIGTERM (the merged prefix is written with "complete": false).
[SEE ALSO]
docs/guide/ of the nhens source tree (command\-line.md is this page in Markdown); python/ (the nhens package, docs/guide/python.md) for Python.
TEXT
} >"$include"
help2man --no-info --no-discard-stderr --name "ensemble studies of nonholonomic integrators" \
  --include "$include" --output "$out.tmp" "$nhens"
mv "$out.tmp" "$out"
