#!/usr/bin/env bash
# The loader links none of the compiler: compile a package with fuserc, run it with
# loader_only_main (linked with fuserc_loader alone), compare with fuserc eval, and check
# that no symbol of the front end, the segmenter, the schedulers, lowering, the CUDA emitter,
# NVRTC or the interpreter is in the loader-only program, and that it links no CUDA library
# (the runtime dlopens the driver).
#
#   loader_only_check.sh FUSERC LOADER_ONLY_MAIN GRAPH WORKDIR
set -euo pipefail
fuserc=$1 loader=$2 graph=$3 work=$4
mkdir -p "$work"
"$fuserc" compile "$graph" -o "$work/p.fpkg" -q
"$fuserc" inputs "$graph" -o "$work/in.safetensors" --bind N=37,H=53
"$loader" "$work/p.fpkg" "$work/in.safetensors" "$work/out.safetensors"
"$fuserc" eval "$graph" --inputs "$work/in.safetensors" --outputs "$work/ref.safetensors"
[ -s "$work/out.safetensors" ] || { echo "loader_only: no output written"; exit 1; }
compiler_symbols=$(nm -C --defined-only "$loader" |
  grep -E 'fuserc::(lower|cuda|kir|eval)::|compile_fusion|segment_fusion|parse_fusion|lower_pointwise|compile_kernels|nvrtc|evaluate_fusion|PointwiseScheduler|ProgramBuilder' || true)
if [ -n "$compiler_symbols" ]; then
  echo "the loader-only program contains compiler symbols:"
  echo "$compiler_symbols" | head -20
  exit 1
fi
if ldd "$loader" | grep -q nvrtc; then
  echo "the loader-only program links NVRTC"
  exit 1
fi
# The CUDA driver is loaded with dlopen when a GPU is used; the CUDA runtime is never used.
if ldd "$loader" | grep -qE 'libcuda\.|libcudart'; then
  echo "the loader-only program links the CUDA driver or runtime library"
  exit 1
fi
echo "loader_only: no compiler symbols, no NVRTC, no CUDA library linked"
