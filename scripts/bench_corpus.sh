#!/usr/bin/env bash
# Runs `fuserc bench --json` on every graph of a folder and prints the README's table of the
# compile and load path (front end, NVRTC, load from a file and from memory, bind per kernel,
# package overhead), then the ranges of the ratios the targets are about.
#
#   scripts/bench_corpus.sh [path/to/fuserc] [GRAPH_DIR]   (defaults: build/cmd/fuserc, tests/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
fuserc=${1:-build/cmd/fuserc}
dir=${2:-tests/corpus}
[ -x "$fuserc" ] || { echo "bench_corpus.sh: no fuserc at $fuserc (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for g in "$dir"/*.json; do
  echo "bench_corpus.sh: $(basename "$g")" >&2
  "$fuserc" bench "$g" --json > "$tmp/$(basename "$g")"
done
python3 - "$tmp" <<'PY'
import glob, json, os, sys
rows = [json.load(open(f)) | {"name": os.path.basename(f)[:-5]} for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
print("| graph | front end | NVRTC (2 archs) | load (file) | load (memory) | bind / kernel | package overhead |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for j in rows:
    print(f"| {j['name']} | {j['frontend_us']:.0f} us | {j['nvrtc_us'] / 1000:.0f} ms | {j['load_us']:.1f} us "
          f"| {j['load_memory_us']:.1f} us | {j['bind_us_per_kernel']:.2f} us | {100 * j['package_overhead']:.1f}% |")
def span(key):
    v = [j[key] for j in rows]
    return f"{min(v):,.0f}-{max(v):,.0f}x"
print()
print(f"front end / load from memory: {span('frontend_over_load_memory')}")
print(f"front end / load from a file: {span('frontend_over_load')}")
print(f"front end + NVRTC / load from a file: {span('frontend_nvrtc_over_load')}")
print(f"bind per kernel: at most {max(j['bind_us_per_kernel'] for j in rows):.2f} us; "
      f"package overhead: at most {100 * max(j['package_overhead'] for j in rows):.1f}%")
PY
