#!/usr/bin/env bash
# docs/guide/command-line.md is the output of `nhens help --markdown` (the option tables), byte for byte.
# Usage: check_command_line.sh NHENS SOURCE_DIR. On a difference: the diff and the command that regenerates it.
set -u
nhens="$1"; page="$2/docs/guide/command-line.md"
if "$nhens" help --markdown | diff -u "$page" -; then
  echo "docs/guide/command-line.md equals nhens help --markdown: 1 passed, 0 failed"
else
  echo "FAILED: docs/guide/command-line.md differs from the program; regenerate it with"
  echo "  build/nhens help --markdown > docs/guide/command-line.md"
  exit 1
fi
