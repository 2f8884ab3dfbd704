#!/usr/bin/env bash
# `fuserc bench GRAPH --emulate-runs N` (issue 24: the emulator's convolution and attention
# speed): on a convolution graph and an attention graph, the JSON reports the emulated plan at
# the sizes bound, with the kernels and library steps the plan launched (the same counts the
# compile reports), and the text form prints its line; --emulate-runs on a package is refused.
# It checks what is reported, never how fast.
#
#   bench_emulated_check.sh FUSERC CORPUS_DIR WORKDIR   (CORPUS_DIR: tests/corpus)
set -euo pipefail
fuserc=$1 corpus=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "bench_emulated_check: $*"; exit 1; }

check() {  # graph, bindings, kernels, library steps
  local graph=$corpus/$1.json
  "$fuserc" bench "$graph" --runs 1 --nvrtc-runs 1 --library-runs 0 --emulate-runs 2 \
    --bind "$2" --json > "$1.json"
  /usr/bin/python3 - "$1.json" "$2" "$3" "$4" <<'PY' || fail "$1: $(cat "$1.json")"
import json, sys
j = json.load(open(sys.argv[1]))["emulated_plan"]
bound = dict(kv.split("=") for kv in sys.argv[2].split(","))
assert j["runs"] == 2, j
assert j["kernels"] == int(sys.argv[3]) and j["library_steps"] == int(sys.argv[4]), j
assert all(j["symbols"][k] == int(v) for k, v in bound.items()), j
assert j["first_us"] > 0 and j["median_us"] > 0, j
PY
  "$fuserc" bench "$graph" --runs 1 --nvrtc-runs 1 --library-runs 0 --emulate-runs 2 \
    --bind "$2" > "$1.txt"
  grep -q "emulated plan ($3 kernels, $4 library steps, .*): .* ms median of 1 runs after the first" "$1.txt" ||
    fail "$1: no emulated plan line in: $(cat "$1.txt")"
}
check resnet_basic_block_bf16 N=1,H=12,W=10 3 2
check sdpa_causal_gqa_bf16 B=1,S=33 2 3

"$fuserc" compile "$corpus/sdpa_causal_gqa_bf16.json" -o a.fpkg -q
if "$fuserc" bench a.fpkg --emulate-runs 2 2> refused.err; then fail "a package was benched"; fi
grep -q -- "--emulate-runs goes with a graph" refused.err || fail "$(cat refused.err)"
echo "bench_emulated_check: ok"
