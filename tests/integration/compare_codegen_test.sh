#!/usr/bin/env bash
# scripts/compare_codegen.sh on a small throwaway git repository this test builds itself. Its
# "fuserc" (a CMake project with no compiler, so it builds in a second) runs the real fuserc
# and then applies its commit's change to what it wrote: commit c1 changes nothing, c2 changes
# one kernel of one graph (its CUDA and its PTX) and the preamble, c3 does not build. Checks:
# the exit status (0 same, 1 different, 2 usage or build error), the summary line, the diffs,
# the HTML report, the dirty-tree refusal, the default revisions (merge base with main, HEAD).
#
#   compare_codegen_test.sh FUSERC SOURCE_DIR WORK_DIR
set -euo pipefail

fuserc=$(realpath "$1")
src=$(realpath "$2")
work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
cd "$work"
compare="$src/scripts/compare_codegen.sh"
export FUSERC_CACHE_DIR=$work/cache
export XDG_CACHE_HOME=$work/xdg
export GIT_CEILING_DIRECTORIES=$work  # the folders above are not the throwaway repository's

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# run EXPECTED_STATUS ARGS...: runs compare_codegen.sh, output in out.txt/err.txt.
run() {
  local expected=$1 status=0
  shift
  "$compare" "$@" >out.txt 2>err.txt || status=$?
  [ "$status" = "$expected" ] ||
    fail "compare_codegen.sh $* exited $status, expected $expected:
$(cat out.txt err.txt)"
}

# The graphs: a multi-kernel one, a pointwise one, a normalization.
mkdir graphs
cp "$src/tests/corpus/segment_set_chain.json" "$src/tests/corpus/bias_gelu_bf16.json" \
  "$src/tests/corpus/softmax_f32.json" graphs/
kernel=$("$fuserc" codegen graphs/segment_set_chain.json -d probe --kernel-only >/dev/null &&
  cd probe && ls __tmp_*.cu | LC_ALL=C sort | tail -1)
kernel=${kernel%.cu}
[ -n "$kernel" ] || fail "no kernel found"

# The throwaway repository.
git init -q -b feature repo
cd repo
git config user.email test@example.com
git config user.name test
cat >CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(stand_in NONE)
configure_file(fuserc.in ${CMAKE_BINARY_DIR}/cmd/fuserc @ONLY
               FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
add_custom_target(fuserc)
EOF
write_stand_in() {  # write_stand_in CHANGE: the shell lines applied to the output folder $d
  cat >fuserc.in <<EOF
#!/usr/bin/env bash
# A stand-in for fuserc: the real one, then this commit's change to its output.
"$fuserc" "\$@" || exit \$?
d=""
prev=""
for a in "\$@"; do [ "\$prev" = -d ] && d=\$a; prev=\$a; done
[ -n "\$d" ] || exit 0
$1
EOF
}
write_stand_in ":"
git add -A
git commit -qm c1
c1=$(git rev-parse HEAD)
git branch main
write_stand_in "case \"\$d\" in */segment_set_chain*)
  [ ! -f \"\$d/$kernel.cu\" ] || echo '// changed by c2' >>\"\$d/$kernel.cu\"
  [ ! -f \"\$d/$kernel.ptx\" ] || echo '// changed by c2' >>\"\$d/$kernel.ptx\" ;;
esac
[ ! -f \"\$d/__preamble.cuh\" ] || echo '// preamble changed by c2' >>\"\$d/__preamble.cuh\""
git commit -qam c2
c2=$(git rev-parse HEAD)
echo 'message(FATAL_ERROR "c3 does not build")' >>CMakeLists.txt
git commit -qam c3
c3=$(git rev-parse HEAD)
git reset -q --hard "$c2"
cd ..

common=(-C repo --work-dir builds --graphs graphs)

# Same revision: nothing differs.
run 0 "${common[@]}" --a "$c1" --b "$c1"
grep -qx "0 kernels differ in 0 of 3 graphs" out.txt || fail "summary: $(cat out.txt)"

# c1 against c2: one kernel of one graph, and the preamble.
run 1 "${common[@]}" --a "$c1" --b "$c2" --html report.html --out kept
tail -n 1 out.txt >last.txt && grep -qx "1 kernels differ in 1 of 3 graphs; the preamble differs" last.txt ||
  fail "summary: $(tail -1 out.txt)"
grep -qx -- "--- a/segment_set_chain/$kernel.cu" out.txt || fail "no diff header: $(cat out.txt)"
grep -qx -- "+// changed by c2" out.txt || fail "no diff line: $(cat out.txt)"
[ "$(grep -c -- "^+// preamble changed by c2" out.txt)" = 1 ] ||
  fail "the preamble diff is not shown exactly once"
if grep -q "bias_gelu_bf16\|softmax_f32" out.txt; then fail "unchanged graphs were diffed"; fi
[ -f "kept/a/segment_set_chain/$kernel.cu" ] && [ -f kept/b/__preamble.cuh ] ||
  fail "--out did not keep the kernels"
grep -q "<details>" report.html || fail "no collapsible section in the HTML report"
grep -q "segment_set_chain/$kernel.cu" report.html || fail "the HTML report misses the kernel"
grep -q "changed\(&nbsp;\| \)by\(&nbsp;\| \)c2" report.html || fail "the HTML report misses the change"
grep -q "1 kernels differ in 1 of 3 graphs" report.html || fail "the HTML report misses the summary"
if grep -qi "<script\|<link\|src=" report.html; then fail "the HTML report is not self-contained"; fi

# The builds are kept by commit and reused.
[ -x "builds/$c1/fuserc" ] && [ -x "builds/$c2/fuserc" ] || fail "builds not kept by commit"
run 1 "${common[@]}" --a "$c1" --b "$c2" --quiet
[ "$(cat out.txt)" = "1 kernels differ in 1 of 3 graphs; the preamble differs" ] ||
  fail "--quiet printed more than the summary: $(cat out.txt)"
[ ! -s err.txt ] || fail "--quiet printed on stderr: $(cat err.txt)"

# --ptx: the PTX is compared too.
run 1 "${common[@]}" --a "$c1" --b "$c2" --ptx
grep -qx -- "--- a/segment_set_chain/$kernel.ptx" out.txt || fail "no PTX diff: $(cat out.txt)"
tail -n 1 out.txt >last.txt && grep -qx "1 kernels differ in 1 of 3 graphs; the preamble differs" last.txt ||
  fail "summary with --ptx: $(tail -1 out.txt)"

# Defaults: a = merge base of main (c1) and HEAD (c2); the graphs of the repository (none
# here, so it says so).
run 1 -C repo --work-dir builds "$work/graphs"
tail -n 1 out.txt >last.txt && grep -qx "1 kernels differ in 1 of 3 graphs; the preamble differs" last.txt ||
  fail "default revisions: $(tail -1 out.txt)"
run 2 -C repo --work-dir builds
grep -q "no graph or folder" err.txt || fail "missing default graphs: $(cat err.txt)"

# A dirty tree is refused unless told.
echo "# dirty" >>repo/CMakeLists.txt
run 2 "${common[@]}" --a "$c1" --b "$c2"
grep -q "uncommitted changes" err.txt || fail "dirty tree: $(cat err.txt)"
run 1 "${common[@]}" --a "$c1" --b "$c2" --allow-dirty
git -C repo checkout -q CMakeLists.txt

# Build errors and usage errors: status 2.
run 2 "${common[@]}" --a "$c1" --b "$c3"
grep -q "the build of fuserc at ${c3:0:12} failed" err.txt || fail "build failure: $(cat err.txt)"
run 2 "${common[@]}" --a no-such-revision
grep -q "unknown revision 'no-such-revision'" err.txt || fail "bad revision: $(cat err.txt)"
run 2 "${common[@]}" --bogus
run 2 -C "$work/graphs" --a "$c1"
grep -q "is not a git repository" err.txt || fail "not a repository: $(cat err.txt)"

rm -rf "$work"
echo "compare_codegen: all checks passed"
