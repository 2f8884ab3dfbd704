#!/usr/bin/env bash
# Builds (if needed) and runs one libFuzzer target for a number of seconds:
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
# TARGET: graph, safetensors, expr, package, c_api (or fuzz_graph, ...). The build lives in
# build-fuzz/ (clang++, -DFUSERC_FUZZ=ON: ASan + UBSan); the corpus grows in
# build-fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET and the test inputs) and crashes are
# written to build-fuzz/crashes/TARGET/. Environment: CXX (default clang++), JOBS (default 2).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1#fuzz_}
seconds=$2
shift 2
build=$root/build-fuzz
case $target in
  graph | safetensors | expr | package | c_api) ;;
  *) echo "fuzz.sh: unknown target '$target' (graph, safetensors, expr, package, c_api)" >&2; exit 2 ;;
esac

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFUSERC_FUZZ=ON -DFUSERC_BUILD_TESTS=OFF -DFUSERC_WERROR=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
fi
if ! cmake --build "$build" -j"${JOBS:-2}" --target "fuzz_$target" >"$build/fuzz-build.log" 2>&1; then
  tail -30 "$build/fuzz-build.log" >&2
  exit 1
fi

# Seeds: the test inputs of the target's kind (and fuzz/seeds/TARGET if any).
corpus=$build/corpus/$target
crashes=$build/crashes/$target
seeds=$build/seeds/$target
mkdir -p "$corpus" "$crashes"
if [[ ! -d $seeds ]]; then
  mkdir -p "$seeds"
  [[ -d $root/fuzz/seeds/$target ]] && cp "$root/fuzz/seeds/$target"/* "$seeds"/
  case $target in
    graph)
      for f in "$root"/tests/graphs/*.json "$root"/tests/errors/*.json "$root"/tests/corpus/*.json; do
        cp "$f" "$seeds/$(basename "$(dirname "$f")")_$(basename "$f")"
      done ;;
    safetensors)
      find "$root/tests" -name '*.safetensors' -size -16k -exec cp {} "$seeds"/ \; ;;
    package | c_api)
      # Small packages compiled without NVRTC by the normal build's tests/make_fuzz_seeds.
      [[ -f $root/build/CMakeCache.txt ]] || cmake -S "$root" -B "$root/build" >/dev/null
      cmake --build "$root/build" -j"${JOBS:-2}" --target make_fuzz_seeds >/dev/null
      "$root/build/tests/make_fuzz_seeds" "$seeds" "$root"/tests/graphs/{empty_mid,indexing_chained,atan2_int_bool}.json \
        "$root"/tests/corpus/{batchnorm_stats,pad_cat}.json ;;
  esac
  # The package targets read their last 64 bytes as the shapes to bind: give each seed some.
  if [[ $target == package || $target == c_api ]]; then
    for f in "$seeds"/*.fpkg; do head -c 64 /dev/urandom >>"$f"; done
  fi
fi
dict=()
[[ -f $root/fuzz/$target.dict ]] && dict=(-dict="$root/fuzz/$target.dict")

max_len=65536
[[ $target == package || $target == c_api ]] && max_len=131072
cd "$crashes"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$build/fuzz/fuzz_$target" "$corpus" "$seeds" -max_total_time="$seconds" \
  -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" -print_final_stats=1 "${dict[@]}" "$@"
