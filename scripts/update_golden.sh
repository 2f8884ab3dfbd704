#!/usr/bin/env bash
# Regenerates the golden CUDA files under tests/golden/ from the graphs listed in
# tests/golden/GRAPHS (one path per line, relative to the repository root), with
# `fuserc codegen --kernel-only`: per graph a folder of __tmp_<kernel>.cu files, and the common
# preamble once as tests/golden/__preamble.cuh. Review the diff, then commit it.
#
#   scripts/update_golden.sh [path/to/fuserc]      (default: build/cmd/fuserc)
set -euo pipefail
cd "$(dirname "$0")/.."
fuserc=${1:-build/cmd/fuserc}
golden=tests/golden
[ -x "$fuserc" ] || { echo "update_golden.sh: no fuserc at $fuserc (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while read -r graph; do
  [ -z "$graph" ] || [ "${graph#\#}" != "$graph" ] && continue
  name=$(basename "$graph" .json)
  "$fuserc" codegen "$graph" -d "$tmp/$name" --kernel-only
  mv "$tmp/$name/__preamble.cuh" "$tmp/__preamble.cuh"
done < "$golden/GRAPHS"
find "$golden" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
rm -f "$golden/__preamble.cuh"
cp -r "$tmp"/. "$golden"/
echo "update_golden.sh: regenerated $(find "$golden" -name '__tmp_*.cu' | wc -l) kernels in $golden"
