#!/usr/bin/env bash
# The test suite under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer:
# configures and builds build-san/ (-DFUSERC_SANITIZE=ON, g++, RelWithDebInfo), runs every CTest
# test registered there (the Python suites are not: README "Sanitizers"), then fails if any
# process wrote a sanitizer report, also one whose test expected a failure and passed anyway.
# CI runs it after the release suite (scripts/setup.sh --test, .ci/run; README "Sanitizers").
#
#   scripts/test_sanitized.sh [CTEST ARGS...]    e.g. -R errors_corpus
#
# Environment: SAN_BUILD_DIR (default build-san), JOBS (default: the number of cores).
# Every process started by the tests reports into $SAN_BUILD_DIR/sanitizer-reports/ (emptied
# first); scripts/sanitizer_env.sh sets the options, for running a single program by hand too.
set -euo pipefail

cd "$(dirname "$0")/.."
SAN_BUILD_DIR=${SAN_BUILD_DIR:-build-san}
JOBS=${JOBS:-$(nproc)}
cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}

echo "== sanitizer build (ASan + UBSan) in $SAN_BUILD_DIR"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$SAN_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSERC_SANITIZE=ON \
  -DCUDAToolkit_ROOT="$cuda_root" "${launcher[@]}" >/dev/null
cmake --build "$SAN_BUILD_DIR" -j "$JOBS"

reports="$PWD/$SAN_BUILD_DIR/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
# shellcheck source=scripts/sanitizer_env.sh
source scripts/sanitizer_env.sh "$reports"

echo "== sanitizer test suite ($SAN_BUILD_DIR)"
status=0
log="$SAN_BUILD_DIR/ctest.log"
ctest --test-dir "$SAN_BUILD_DIR" -j "$JOBS" --output-on-failure --timeout 900 "$@" 2>&1 | tee "$log" || status=$?
# A ctest stopped by a signal has been seen to exit 0 without running the rest: only its
# summary line says that every selected test ran.
if ! grep -qE '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log"; then
  echo "test_sanitized: ctest ended without its summary line (stopped?), see $log" >&2
  if ((status == 0)); then status=1; fi
fi

shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]})); then
  echo "test_sanitized: ${#found[@]} sanitizer report(s) in $reports:" >&2
  for f in "${found[@]}"; do
    echo "---- $f" >&2
    head -n 40 "$f" >&2
  done
  exit 1
fi
if ((status != 0)); then exit "$status"; fi
echo "== sanitizer test suite: passed, no sanitizer reports"
