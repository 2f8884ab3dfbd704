#!/usr/bin/env bash
# The CMake integration: `cmake --install` of this build into a fresh prefix, then
# examples/cmake (find_package(fuserc), fuserc_add_package, fuserc::runtime) configured and
# built against it with Make and with Ninja; the app runs its package through the runtime's C
# interface (on a GPU, else in the CPU emulator) and checks the values; a second build
# does nothing; touching the graph rebuilds the package (and only then).
#
#   cmake_example_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail

build=$(realpath "$1")
src=$(realpath "$2")
work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
export FUSERC_CACHE_DIR=$work/cache

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" ||
  fail "cmake --install failed: $(cat "$work/install.log")"
for f in bin/fuserc lib/cmake/fuserc/fusercConfig.cmake lib/cmake/fuserc/fusercConfigVersion.cmake \
  lib/cmake/fuserc/fusercTargets.cmake lib/cmake/fuserc/FusercAddPackage.cmake; do
  [ -f "$work/prefix/$f" ] || fail "the install has no $f"
done
version=$("$work/prefix/bin/fuserc" --version)
grep -q "^fuserc " <<<"$version" || fail "the installed fuserc does not run: $version"

# The app runs on GPU 0 where there is one (the CUDA driver loads and sees a device), else in
# the CPU emulator, saying why.
where="the CPU emulator"
if nvidia-smi -L 2>/dev/null | grep -q '^GPU 0'; then
  where="GPU 0"
fi

cp -r "$src/examples/cmake" "$work/example"  # a project outside fuserc's tree
generators=("Unix Makefiles")
if command -v ninja >/dev/null; then
  generators+=(Ninja)
else
  echo "note: ninja is not installed (scripts/setup.sh installs it): checked with Make only"
fi
for generator in "${generators[@]}"; do
  b="$work/build-${generator// /-}"
  cmake -S "$work/example" -B "$b" -G "$generator" -DCMAKE_PREFIX_PATH="$work/prefix" \
    >"$b.configure.log" 2>&1 || fail "$generator: configure failed: $(cat "$b.configure.log")"
  cmake --build "$b" >"$b.build1.log" 2>&1 || fail "$generator: build failed: $(cat "$b.build1.log")"
  grep -q "fuserc: compiling bias_gelu (sm_80,sm_90)" "$b.build1.log" ||
    fail "$generator: the package step did not run: $(cat "$b.build1.log")"
  pkg="$b/bias_gelu.fpkg"
  [ -s "$pkg" ] || fail "$generator: no package"
  grep -qF "$work/example/bias_gelu.json" "$pkg.d" || fail "$generator: depfile: $(cat "$pkg.d")"
  "$b/bias_gelu_app" >"$b.run.log" 2>&1 || fail "$generator: the app failed: $(cat "$b.run.log")"
  grep -q "^fuserc runtime " "$b.run.log" || fail "$generator: no runtime version: $(cat "$b.run.log")"
  [ "$(grep -v '^fuserc runtime \|^no GPU (' "$b.run.log" | sed 's/max |error| [^,]*,/max |error| E,/')" = \
    "bias_gelu: 1 symbols, 2 inputs, 1 outputs
  input  x [N, 4096]
  input  bias [4096]
  output y [N, 4096]
N = 16: 1 kernel launches on $where
y = gelu(x + bias): 65536 elements, max |error| E, ok" ] ||
    fail "$generator: unexpected output: $(cat "$b.run.log")"
  # Without a GPU, one line says why before it runs in the emulator.
  if [ "$where" = "the CPU emulator" ]; then
    grep -q "^no GPU (.\+): running in the CPU emulator$" "$b.run.log" ||
      fail "$generator: no reason given for not using a GPU: $(cat "$b.run.log")"
  fi
  # A package that is not there: one line naming it, exit status 1.
  if "$b/bias_gelu_app" --emulate "$work/missing.fpkg" >"$b.missing.log" 2>&1; then
    fail "$generator: the app succeeded without a package"
  fi
  [ "$(wc -l <"$b.missing.log")" = 2 ] && grep -q "^bias_gelu_app: loading: .*missing.fpkg" "$b.missing.log" ||
    fail "$generator: unexpected error for a missing package: $(cat "$b.missing.log")"
  "$work/prefix/bin/fuserc" inspect "$pkg" --json >"$b.inspect.json"
  grep -q '"sm_90"' "$b.inspect.json" || fail "$generator: the package lacks sm_90"

  # Nothing to do when nothing changed.
  before=$(stat -c '%i %y' "$pkg")
  cmake --build "$b" >"$b.build2.log" 2>&1 || fail "$generator: rebuild failed"
  [ "$(stat -c '%i %y' "$pkg")" = "$before" ] || fail "$generator: the package was rebuilt for nothing"
  if grep -q "fuserc: compiling" "$b.build2.log"; then fail "$generator: the step ran again"; fi

  # The graph changed: the package is rebuilt.
  touch -d '+2 seconds' "$work/example/bias_gelu.json"
  cmake --build "$b" >"$b.build3.log" 2>&1 || fail "$generator: build after touching failed"
  grep -q "fuserc: compiling bias_gelu" "$b.build3.log" ||
    fail "$generator: the package was not rebuilt after the graph changed"
  [ "$(stat -c '%i %y' "$pkg")" != "$before" ] || fail "$generator: the package is unchanged"
  touch -d '-1 minute' "$work/example/bias_gelu.json"  # back, for the next generator
done

cat "$work/build-Unix-Makefiles.run.log"  # what the app printed
rm -rf "$work"
echo "cmake example: all checks passed"
