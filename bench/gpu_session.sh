#!/usr/bin/env bash
# The checks a session lent a GPU runs, in one call of the device tool, after
# bench/gpu_session_prep.sh has filled .gpu/ here (carry [".gpu"]). Sections in order of
# worth, each under its own time limit so that one slow part cannot take the rest; every
# log goes to $OUT as it is written (at most 8 files come back):
#   correct.log    check_corpus.py --modes gpu over the shared corpus, tests/graphs and
#                  bench/graphs (8 shards side by side); the gpu-labelled tests; the Python
#                  package's round trips on CUDA tensors (python/tests/gpu_check.py)
#   sanitizer.log  compute-sanitizer memcheck of `fuserc run` on graphs changed since the last
#                  GPU run; racecheck on the split normalization, the combo kernels and
#                  the persistent layer norm and softmax (two block reductions per row)
#   adam.log       bench/adam_gpu.py: 200 parameters, combo kernels against torch's fused Adam
#   models.log     python/tests/gpu_models.py: GPT-2 and LLaMA, both tracers, against eager
#                  and torch.compile
#   compare.log    bench/gpu_compare.py: batch norms over few long rows; x @ w + b products
#                  (bench/graphs/addmm_mlp_bf16.json, the bias epilogue) beside linear's own bias
#   gpu_run.log    the independent launcher over the corpus's kernel graphs (retiming)
#   SECTIONS=correct,models ... runs only those (in this file's order). The first full run (an
#   H200, 2026-11-28) took 250 s; the README's "A GPU session in one call" has its figures.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
G=$ROOT/.gpu
OUT=${OUT:-/tmp/gpu_session_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 FUSERC_CACHE_DIR=$G/cache
export FUSERC_EXECUTABLE=$G/bin/fuserc FUSERC_LIBRARY=$G/bin/libfuserc.so
F=$G/bin/fuserc
# The libraries copied beside the binaries only where the machine lacks one (they would
# shadow its own for Python and PyTorch too).
if ldd "$F" | grep -q "not found"; then export LD_LIBRARY_PATH=$G/bin:${LD_LIBRARY_PATH:-}; fi
SECTIONS=${SECTIONS:-env,correct,sanitizer,adam,models,compare,gpu_run}
want() { [[ ",$SECTIONS," == *",$1,"* ]]; }
stamp() { echo "== $(date +%T) $*"; }
# The gpu tests read tests/corpus at the path this build was made in.
[ -d /work/main/tests ] || { mkdir -p /work && ln -sfn "$ROOT" /work/main; }

if want env; then {
  stamp env; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
  ldd "$F" | grep -i "not found" || echo "fuserc: every shared library found"
  "$F" --version
  ls /usr/local/cuda/lib64 2>/dev/null | grep -E "cudnn|cublasLt" | head
  find / -xdev -name 'libcudnn.so*' 2>/dev/null | head -5
  nproc; } > "$OUT/env.log" 2>&1; fi

if want correct; then {
  stamp correct
  ls "$G"/corpus/*.json tests/graphs/*.json bench/graphs/*.json > /tmp/graphs.txt
  split -n r/8 /tmp/graphs.txt /tmp/shard_
  for s in /tmp/shard_*; do
    timeout 240 /usr/bin/env python3 "$G/tools/check_corpus.py" --fuserc "$F" --modes gpu \
      $(cat "$s") > "$s.log" 2>&1 &
  done
  (cd "$G/bin" && timeout 240 ./fuserc_gpu_tests > /tmp/gpu_tests.log 2>&1; echo "fuserc_gpu_tests exit $?" >> /tmp/gpu_tests.log) &
  PYTHONPATH=python timeout 240 python3 python/tests/gpu_check.py --fuserc "$F" \
    --lib "$G/bin/libfuserc.so" --arch sm_90 --calls 500 > /tmp/gpu_check.log 2>&1 &
  wait
  for s in /tmp/shard_*.log; do echo "-- $s"; grep -v "^ok\|^PASS\|passed$" "$s" | head -60; tail -1 "$s"; done
  echo "-- fuserc_gpu_tests"; tail -15 /tmp/gpu_tests.log
  echo "-- python/tests/gpu_check.py"; cat /tmp/gpu_check.log | tail -60
  stamp correct done; } > "$OUT/correct.log" 2>&1; fi

if want sanitizer; then {
  stamp sanitizer
  mkdir -p /tmp/san
  san() {  # tool graph [bind]
    local tool=$1 g=$2 n; n=$(basename "$g" .json)
    "$F" compile "$g" -o /tmp/san/$n.fpkg -q --arch sm_90 &&
    "$F" inputs "$g" -o /tmp/san/$n.in.safetensors ${3:+--bind $3} &&
    timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 "$F" run /tmp/san/$n.fpkg \
      --inputs /tmp/san/$n.in.safetensors --outputs /tmp/san/$n.out.safetensors > /tmp/san/$n.$tool.log 2>&1
    echo "$tool $n: exit $? $(grep -m1 'ERROR SUMMARY' /tmp/san/$n.$tool.log)"
    grep -m5 "Invalid\|Race\|Error:" /tmp/san/$n.$tool.log
  }
  for g in tests/graphs/library_bias_epilogue.json tests/graphs/library_bias_layouts.json \
           tests/graphs/gather_along_reduced_rows.json tests/graphs/cast_rounds_half_arithmetic.json \
           tests/graphs/shapes_batchnorm_train.json tests/graphs/library_in_place_linear_relu.json \
           tests/graphs/library_strided_alias_sdpa.json tests/graphs/sdpa_gqa_symbolic_heads_causal.json; do
    san memcheck "$g" &
  done
  wait
  python3 bench/make_adam.py --out /tmp/san/adam20.json --params 20 --seed 1 > /dev/null
  san racecheck /tmp/san/adam20.json &
  san racecheck "$G/graphs/batchnorm_train_c8_f32.json" N=4,H=64,W=64 &
  san racecheck "$G/corpus/layer_norm_fwd_bf16.json" N=64 &
  san racecheck "$G/corpus/masked_softmax_neg_inf_f16.json" N=16,S=1024 &
  san synccheck "$G/graphs/batchnorm_train_c8_f32.json" N=4,H=64,W=64 &
  wait
  stamp sanitizer done; } > "$OUT/sanitizer.log" 2>&1; fi

if want adam; then {
  stamp adam
  timeout 120 python3 bench/adam_gpu.py --fuserc "$F" --params 200 --seed 1
  stamp adam done; } > "$OUT/adam.log" 2>&1; fi

if want models; then {
  stamp models
  PYTHONPATH=python timeout 300 python3 python/tests/gpu_models.py --fuserc "$F" \
    --lib "$G/bin/libfuserc.so" --arch sm_90 --layers 4 --batch 8 --seq 512
  stamp models done; } > "$OUT/models.log" 2>&1; fi

if want compare; then {
  stamp compare
  timeout 200 python3 bench/gpu_compare.py --fuserc "$F" --tools "$G/tools" --out /tmp/cmp \
    "$G/corpus/batchnorm_train_fwd_f32.json:N=64,H=128,W=128" \
    "$G/graphs/batchnorm_train_c8_f32.json:N=64,H=128,W=128" \
    "$G/corpus/batchnorm_train_fwd_f32.json:N=32,H=56,W=56" \
    "bench/graphs/addmm_mlp_bf16.json:N=16384" "$G/corpus/mlp_gelu_bf16.json:N=16384"
  cat /tmp/cmp/gpu_compare.json
  stamp compare done; } > "$OUT/compare.log" 2>&1; fi

if want gpu_run; then {
  stamp gpu_run
  timeout 280 python3 "$G/tools/gpu/gpu_run.py" --pkgs "$G/pkgs" --json /tmp/gpu_run.json \
    --compile layer_norm_fwd_bf16,layer_norm_to_heads_bf16,masked_softmax_neg_inf_f16,batchnorm_stats,embedding_pos_layernorm_bf16,rms_norm_fwd_bf16,window_softmax_view_f32,softmax_f32
  cat /tmp/gpu_run.json
  stamp gpu_run done; } > "$OUT/gpu_run.log" 2>&1; fi
