#!/usr/bin/env bash
# Wall time of compiling a set of graphs three ways, for the README's remote cache figures:
#   cold         an empty local cache and nothing on the server: every kernel through NVRTC
#                (and PUT to the server);
#   local warm   the same local cache again: every kernel from the local disk;
#   remote warm  a second, empty local cache: every kernel fetched from the server.
# Checks that the packages of all three are byte-identical and that the remote-warm build
# compiled nothing. One `fuserc compile -j 2 --arch sm_80,sm_90` per graph.
#
#   scripts/bench_remote_cache.sh FUSERC URL GRAPH.json...
# URL: an empty namespace on a cache server (e.g. http://127.0.0.1:8080/bench-$(date +%s)).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 FUSERC URL GRAPH.json..." >&2; exit 2; }
fuserc=$(realpath "$1")
url=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build NAME CACHE: compiles every graph into $tmp/NAME with the local cache CACHE; prints
# the seconds it took.
build() {
  local start end
  mkdir -p "$tmp/$1"
  start=$(date +%s.%N)
  for g in "${graphs[@]}"; do
    "$fuserc" compile "$g" -o "$tmp/$1/$(basename "$g" .json).fpkg" --arch sm_80,sm_90 -j 2 \
      --quiet --cache-dir "$tmp/$2" --cache-url "$url"
  done
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
graphs=("$@")
cold=$(build cold cache1)
local_warm=$(build local cache1)
remote_warm=$(build remote cache2)
for p in "$tmp"/cold/*.fpkg; do
  cmp -s "$p" "$tmp/local/$(basename "$p")" || { echo "differs: local $(basename "$p")"; exit 1; }
  cmp -s "$p" "$tmp/remote/$(basename "$p")" || { echo "differs: remote $(basename "$p")"; exit 1; }
done
stores=$("$fuserc" cache stats --cache-dir "$tmp/cache2" | sed -nE 's/.*stores ([0-9]+),.*/\1/p')
[ "$stores" = 0 ] || { echo "the remote-warm build compiled $stores kernels"; exit 1; }
printf '%d graphs: cold %.2f s, local warm %.2f s, remote warm %.2f s (packages identical; ' \
  "${#graphs[@]}" "$cold" "$local_warm" "$remote_warm"
"$fuserc" cache stats --cache-dir "$tmp/cache2" | sed -nE 's/^remote: (.*) \(--cache-url.*/remote warm: \1)/p'
