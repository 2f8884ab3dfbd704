#!/usr/bin/env bash
# The command-line side of issue 11: `fuserc inspect --bind hints` prints the traffic (text and
# JSON), `fuserc dot` draws a graph (a cluster per kernel) and a package (a node per launch),
# and `-o X.svg` gives SVG when Graphviz is installed, else one line saying so and no file;
# `--time-passes` prints the table of stages for `compile` and `codegen` alike.
#
#   dot_traffic_check.sh FUSERC GRAPH_ONE_KERNEL GRAPH_TWO_KERNELS WORKDIR
set -euo pipefail
fuserc=$1 one=$2 two=$3 work=$4
mkdir -p "$work"
fail() { echo "dot_traffic_check: $*"; exit 1; }

"$fuserc" compile "$one" -o "$work/one.fpkg" -q
"$fuserc" inspect "$work/one.fpkg" --bind hints > "$work/inspect.txt"
grep -q "global_bytes: " "$work/inspect.txt" || fail "no global_bytes in inspect --bind hints"
grep -q "min_global_bytes: " "$work/inspect.txt" || fail "no min_global_bytes"
grep -q "traffic ratio: 1.000" "$work/inspect.txt" || fail "one kernel should move each tensor once"
"$fuserc" inspect "$work/one.fpkg" --bind hints --json > "$work/inspect.json"
grep -q '"min_global_bytes"' "$work/inspect.json" || fail "no min_global_bytes in JSON"

"$fuserc" dot "$two" > "$work/two.dot"
[ "$(grep -c 'subgraph cluster_' "$work/two.dot")" = 2 ] || fail "want two clusters"
grep -q '^digraph ' "$work/two.dot" || fail "not a digraph"
"$fuserc" dot "$work/one.fpkg" -o "$work/one.dot"
grep -q '"launch 0"' "$work/one.dot" || fail "no launch node in the package's picture"

rm -f "$work/two.svg"
if command -v dot > /dev/null; then
  "$fuserc" dot "$two" -o "$work/two.svg"
  grep -q '<svg' "$work/two.svg" || fail "no SVG written"
else
  set +e
  PATH=/nonexistent "$fuserc" dot "$two" -o "$work/two.svg" 2> "$work/svg.err"
  rc=$?
  set -e
  [ "$rc" = 1 ] || fail "SVG without Graphviz: exit $rc, want 1"
  [ "$(wc -l < "$work/svg.err")" = 1 ] || fail "more than one line"
  [ ! -e "$work/two.svg" ] || fail "a file was written"
fi
for cmd in "compile $two -o $work/two.fpkg -q" "codegen $two --dir $work/two_cuda"; do
  # shellcheck disable=SC2086  # the words of one command
  "$fuserc" $cmd --time-passes 2> "$work/passes.txt" > /dev/null
  for stage in segment lower total; do
    grep -qE "^$stage +[0-9]" "$work/passes.txt" || fail "fuserc ${cmd%% *} --time-passes: no '$stage' row"
  done
  # Segmentation's steps are indented under it and not counted again in the total.
  for step in regions "merge producers" "merge siblings"; do
    grep -qE "^  $step +[0-9]" "$work/passes.txt" ||
      fail "fuserc ${cmd%% *} --time-passes: no '$step' step under segment"
  done
  awk '/^[a-z]/ && $1 != "stage" && $1 != "total" {sum += $2} $1 == "total" {total = $2}
       END {d = sum - total; if (d < -0.01 || d > 0.01) exit 1}' "$work/passes.txt" ||
    fail "fuserc ${cmd%% *} --time-passes: the total is not the sum of the stages"
done
echo "dot_traffic_check: ok"
