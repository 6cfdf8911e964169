#!/usr/bin/env bash
# The C++ tree's format (.clang-format, clang-format 14): `scripts/format.sh` checks every C++ file
# of cpp/, tests/native/, tests/fuzz/ and bench/ and lists those it would change (exit 1);
# `scripts/format.sh --fix` rewrites them. npm run test:native runs the check.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$clang_format" ]; then
  echo "format: FAILED: clang-format 14 is not installed (scripts/bootstrap.sh installs it)"
  exit 1
fi
mapfile -t files < <(git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'cpp/*.inc' 'tests/native/*.cpp' 'tests/native/*.hpp' \
  'tests/fuzz/*.cpp' 'tests/fuzz/*.hpp' 'bench/*.cpp')
if [ "${1:-}" = "--fix" ]; then
  "$clang_format" -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
# One run over every file; each line it would change is a "file:line:col: error: …" report.
if ! out=$("$clang_format" --dry-run --Werror "${files[@]}" 2>&1); then
  mapfile -t bad < <(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' <<<"$out" | sort -u)
  printf 'format: %s differs from .clang-format\n' "${bad[@]}"
  echo "format: FAILED: ${#bad[@]} of ${#files[@]} C++ files (scripts/format.sh --fix rewrites them)"
  exit 1
fi
echo "format: ${#files[@]} C++ files as .clang-format says"
