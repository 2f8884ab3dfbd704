#!/usr/bin/env bash
# Sets fuserc up on a Debian machine: installs what is missing (Debian packages), checks for
# the CUDA Toolkit, configures and builds; then optionally runs the tests or the example.
#
#   scripts/setup.sh              install what is missing and build (into build/)
#   scripts/setup.sh --test       ... then run the whole test suite (what CI runs); then build
#                                 everything again with ASan + UBSan in build-san/ and run the
#                                 suite there (scripts/test_sanitized.sh; SANITIZE=0 skips it)
#   scripts/setup.sh --example    ... then run the main job on examples/bias_gelu.json (compile
#                                 it into a package, inspect it, run it in the CPU emulator),
#                                 and the Python example (examples/python/); release build only
#
# It also makes the Python package importable by /usr/bin/python3 (`import fuserc`): a
# fuserc.pth file in python3's site-packages names this checkout's python/ folder.
# Environment: BUILD_DIR (default build), JOBS (default: the number of cores), SANITIZE (0: no
# sanitizer suite with --test).
set -euo pipefail

cd "$(dirname "$0")/.."
mode=build
case "${1:-}" in
  "") ;;
  --test) mode=test ;;
  --example) mode=example ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown option '$1' (see scripts/setup.sh --help)" >&2; exit 2 ;;
esac
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# 1. Debian packages (quiet when everything is there).
packages=(cmake make g++ libcli11-dev nlohmann-json3-dev libflatbuffers-dev flatbuffers-compiler
          libxxhash-dev git ninja-build libcurl4-openssl-dev
          catch2 nginx-light curl  # the remote compile cache test's server and client
          python3 python3-torch)  # the Python package (python/) and its tests
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# 2. The CUDA Toolkit (NVRTC) is not a Debian package here: it must be at /usr/local/cuda.
cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -f "$cuda_root/include/nvrtc.h" ]; then
  echo "setup: error: the CUDA Toolkit was not found at $cuda_root (fuserc needs NVRTC from it)." >&2
  echo "setup: install it from https://developer.nvidia.com/cuda-downloads, or set CUDAToolkit_ROOT." >&2
  exit 1
fi

# 3. Configure and build.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$cuda_root" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

# 4. The Python package: importable by python3 from anywhere (a .pth file naming python/, in
#    the system's site-packages when root, else the user's). It finds libfuserc.so and the
#    fuserc executable in build/ (FUSERC_LIBRARY / FUSERC_EXECUTABLE / FUSERC_BUILD_DIR
#    point elsewhere).
site_dir=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
if [ "$(id -u)" -ne 0 ] && [ ! -w "$site_dir" ]; then
  site_dir=$(/usr/bin/python3 -c 'import site; print(site.getusersitepackages())')
fi
mkdir -p "$site_dir"
echo "$PWD/python" > "$site_dir/fuserc.pth"
if [ "$BUILD_DIR" != build ]; then
  echo "setup: note: the Python package looks for the build in build/; export FUSERC_BUILD_DIR=$PWD/$BUILD_DIR"
fi
FUSERC_BUILD_DIR="$PWD/$BUILD_DIR" /usr/bin/python3 -c 'import fuserc; fuserc.version()' \
  || { echo "setup: error: python3 cannot import fuserc" >&2; exit 1; }

# 5. What was asked for.
case "$mode" in
  test)
    echo "== release test suite ($BUILD_DIR)"
    # --timeout: a test that hangs fails by name instead of stopping CI (tests that need longer
    # set their own TIMEOUT).
    ctest --test-dir "$BUILD_DIR" -j "$JOBS" --output-on-failure --timeout 900
    if [ "${SANITIZE:-1}" != 0 ]; then
      JOBS=$JOBS scripts/test_sanitized.sh
    fi
    ;;
  example)
    fuserc="$BUILD_DIR/cmd/fuserc"
    work="$BUILD_DIR/example"
    mkdir -p "$work"
    set -x
    "$fuserc" compile examples/bias_gelu.json -o "$work/bias_gelu.fpkg"
    "$fuserc" inspect "$work/bias_gelu.fpkg" --bind N=4096
    "$fuserc" inputs examples/bias_gelu.json -o "$work/in.safetensors" --bind N=64
    "$fuserc" run "$work/bias_gelu.fpkg" --inputs "$work/in.safetensors" \
      --outputs "$work/out.safetensors" --emulate
    "$fuserc" eval examples/bias_gelu.json --inputs "$work/in.safetensors" \
      --outputs "$work/reference.safetensors"
    FUSERC_BUILD_DIR="$PWD/$BUILD_DIR" /usr/bin/python3 examples/python/export_and_call.py
    FUSERC_BUILD_DIR="$PWD/$BUILD_DIR" /usr/bin/python3 examples/python/export_module.py
    FUSERC_BUILD_DIR="$PWD/$BUILD_DIR" /usr/bin/python3 examples/python/export_gpt.py
    { set +x; } 2>/dev/null
    echo "setup: example done: $work/bias_gelu.fpkg, its outputs in $work/out.safetensors"
    ;;
esac
