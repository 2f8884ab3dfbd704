#!/usr/bin/env bash
# Measures fuserc compile as a build step (the figures in the README):
#   1. per graph, the wall time of a whole `fuserc compile` process with an empty cache (cold)
#      and again with the cache it filled (warm: an unchanged graph), and warm / cold;
#   2. -j 1 against -j 2 (no cache) on a graph with many kernels: the speed-up.
# Each figure is the median of RUNS runs (default 3). The load average is printed before and
# after: other work on the machine disturbs the figures (the speed-up most).
#
#   scripts/bench_pipeline.sh [path/to/fuserc] [GRAPH.json...]
#       (default: build/cmd/fuserc; the corpus graphs for 1, tests/graphs/reduce_dims.json for 2)
# Environment: RUNS, ARCHS (default sm_80,sm_90), JOBS_GRAPH (the graph for 2).
set -euo pipefail
cd "$(dirname "$0")/.."
fuserc=${1:-build/cmd/fuserc}
[ -x "$fuserc" ] || { echo "bench_pipeline.sh: no fuserc at $fuserc (build first)" >&2; exit 2; }
shift || true
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(tests/corpus/*.json)
runs=${RUNS:-3}
archs=${ARCHS:-sm_80,sm_90}
jobs_graph=${JOBS_GRAPH:-tests/graphs/reduce_dims.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
# wall time in ms of one whole fuserc compile process with the given extra options (bash's
# clock: no process is started to read it)
time_compile() {
  local graph=$1 start end
  shift
  start=$EPOCHREALTIME
  "$fuserc" compile "$graph" -o "$tmp/p.fpkg" --arch "$archs" -q "$@"
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.1f\n", (e - s) * 1000}'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; runs: $runs"
echo
echo "| graph | kernels compiled | cold (ms) | warm (ms) | warm / cold |"
echo "| --- | --- | --- | --- | --- |"
for g in "${graphs[@]}"; do
  cold=() warm=()
  for ((r = 0; r < runs; r++)); do
    rm -rf "$tmp/cache"
    cold+=("$(time_compile "$g" --cache-dir "$tmp/cache")")
    warm+=("$(time_compile "$g" --cache-dir "$tmp/cache")")
  done
  c=$(printf '%s\n' "${cold[@]}" | median)
  w=$(printf '%s\n' "${warm[@]}" | median)
  rm -rf "$tmp/k"
  n=$("$fuserc" codegen "$g" -d "$tmp/k" >/dev/null && ls "$tmp/k" | wc -l)
  awk -v g="$(basename "$g" .json)" -v n="$n" -v c="$c" -v w="$w" \
    'BEGIN {printf "| %s | %d | %.0f | %.1f | %.1f%% |\n", g, n, c, w, 100 * w / c}'
done

echo
rm -rf "$tmp/k"
kernels=$("$fuserc" codegen "$jobs_graph" -d "$tmp/k" >/dev/null && ls "$tmp/k" | wc -l)
one=() two=()
for ((r = 0; r < runs; r++)); do
  one+=("$(time_compile "$jobs_graph" --no-cache -j 1)")
  two+=("$(time_compile "$jobs_graph" --no-cache -j 2)")
done
j1=$(printf '%s\n' "${one[@]}" | median)
j2=$(printf '%s\n' "${two[@]}" | median)
awk -v g="$(basename "$jobs_graph" .json)" -v k="$kernels" -v a="$archs" -v j1="$j1" -v j2="$j2" \
  'BEGIN {printf "%s (%d kernels x %s, no cache): -j 1 %.0f ms, -j 2 %.0f ms: %.2fx\n", g, k, a, j1, j2, j1 / j2}'
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
