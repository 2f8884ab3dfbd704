#!/usr/bin/env bash
# Without a CUDA driver (FUSERC_LIBCUDA points at a missing file, so this holds on machines
# with a GPU too), `fuserc run` and the C example stop with one clear line and write nothing;
# libfuserc.so exports exactly the functions of fuserc_runtime.h.
#
#   no_driver_check.sh FUSERC EXAMPLE LIBFUSERC HEADER GRAPH WORKDIR
set -euo pipefail
fuserc=$1 example=$2 lib=$3 header=$4 graph=$5 work=$6
mkdir -p "$work"
rm -f "$work/out.safetensors"
"$fuserc" compile "$graph" -o "$work/p.fpkg" -q
"$fuserc" inputs "$graph" -o "$work/in.safetensors" --bind N=37
export FUSERC_LIBCUDA=/nonexistent/libcuda.so.1
want="no CUDA driver: cannot load /nonexistent/libcuda.so.1"

set +e
"$fuserc" run "$work/p.fpkg" --inputs "$work/in.safetensors" --outputs "$work/out.safetensors" \
  2> "$work/run.err"
rc=$?
set -e
[ "$rc" = 1 ] || { echo "fuserc run without a driver: exit $rc, want 1"; exit 1; }
grep -q "^fuserc: error: $want" "$work/run.err" || { echo "unexpected message:"; cat "$work/run.err"; exit 1; }
grep -q -- "--emulate" "$work/run.err" || { echo "no hint about --emulate:"; cat "$work/run.err"; exit 1; }
[ "$(wc -l < "$work/run.err")" = 1 ] || { echo "more than one line:"; cat "$work/run.err"; exit 1; }
[ ! -e "$work/out.safetensors" ] || { echo "an output file was written"; exit 1; }

set +e
"$example" "$work/p.fpkg" > "$work/example.out" 2> "$work/example.err"
rc=$?
set -e
[ "$rc" = 1 ] || { echo "the example without a driver: exit $rc, want 1"; exit 1; }
grep -q "^run_package: binding: $want" "$work/example.err" || { echo "unexpected:"; cat "$work/example.err"; exit 1; }
grep -q "^symbol N = " "$work/example.out" || { echo "the example did not load the package"; exit 1; }

exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
declared=$(grep -oE 'fuserc_[a-z_]+\(' "$header" | tr -d '(' | sort -u)
if [ "$exported" != "$declared" ]; then
  echo "libfuserc.so exports differ from fuserc_runtime.h:"
  diff <(echo "$declared") <(echo "$exported") || true
  exit 1
fi
echo "no_driver: clear messages, nothing written; libfuserc.so exports $(echo "$exported" | wc -l) functions"
