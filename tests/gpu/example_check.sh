#!/usr/bin/env bash
# The C example on a GPU: compile a package, run it; skipped (exit 77, saying so) when the
# runtime finds no CUDA driver.
#
#   example_check.sh FUSERC EXAMPLE GRAPH WORKDIR
set -euo pipefail
fuserc=$1 example=$2 graph=$3 work=$4
mkdir -p "$work"
"$fuserc" compile "$graph" -o "$work/p.fpkg" -q
set +e
"$example" "$work/p.fpkg" > "$work/out.txt" 2> "$work/err.txt"
rc=$?
set -e
if [ "$rc" != 0 ] && grep -q "no CUDA driver\|no usable CUDA driver" "$work/err.txt"; then
  echo "SKIPPED: needs a GPU: $(cat "$work/err.txt")"
  exit 77
fi
cat "$work/out.txt" "$work/err.txt"
[ "$rc" = 0 ] || { echo "the example failed (exit $rc)"; exit 1; }
grep -q "^output " "$work/out.txt" || { echo "the example printed no output"; exit 1; }
if grep "^output " "$work/out.txt" | grep -qi "nan"; then echo "NaN in an output"; exit 1; fi
echo "example ran on the GPU"
