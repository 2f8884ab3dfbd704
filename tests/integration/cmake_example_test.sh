#!/usr/bin/env bash
# The CMake integration: `cmake --install` of this build into a fresh prefix, then
# examples/cmake (find_package(fuserc), fuserc_add_package, fuserc::runtime) configured and
# built against it with Make and with Ninja; the app runs and loads its package; a second build
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
  "$b/bias_gelu_app" >"$b.run.log" || fail "$generator: the app failed: $(cat "$b.run.log")"
  [ "$(head -n 2 "$b.run.log")" = "bias_gelu: 1 symbols, 2 inputs, 1 outputs
  N = 4096" ] || fail "$generator: unexpected output: $(cat "$b.run.log")"
  # Bound (the plan's launches), or, where binding needs a GPU, the reason it could not.
  grep -q "^  1 kernel launches\|^  not bound (no GPU): " "$b.run.log" ||
    fail "$generator: unexpected output: $(cat "$b.run.log")"
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

rm -rf "$work"
echo "cmake example: all checks passed"
