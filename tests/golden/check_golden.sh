#!/usr/bin/env bash
# The golden-CUDA test: regenerates the kernels of tests/golden/GRAPHS with the fuserc under
# test and fails, showing the diff, if any generated file differs from its golden copy (or one
# is missing or extra). A change in generated code must be deliberate: run
# scripts/update_golden.sh, review the diff, commit it.
#
#   check_golden.sh FUSERC REPO_ROOT
set -uo pipefail
fuserc=$1
root=$2
golden=$root/tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
while read -r graph; do
  [ -z "$graph" ] || [ "${graph#\#}" != "$graph" ] && continue
  name=$(basename "$graph" .json)
  if ! "$fuserc" codegen "$root/$graph" -d "$tmp/$name" --kernel-only; then
    echo "FAIL $name: fuserc codegen failed"; status=1; continue
  fi
  mv "$tmp/$name/__preamble.cuh" "$tmp/__preamble.cuh"
done < "$golden/GRAPHS"
if ! diff -ru --exclude=GRAPHS --exclude=check_golden.sh "$golden" "$tmp"; then
  echo "golden CUDA files differ: if the change is intended, run scripts/update_golden.sh"
  status=1
fi
n=$(find "$tmp" -name '__tmp_*.cu' | wc -l)
echo "golden CUDA: $n kernels compared, $([ $status = 0 ] && echo identical || echo DIFFERENT)"
exit $status
