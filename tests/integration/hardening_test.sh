#!/usr/bin/env bash
# `fuserc compile` under failure, and every command that reads a package against damaged ones:
#   1. a full disk (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG), a missing or
#      non-folder output folder and an NVRTC failure (FUSERC_TEST_FAIL_NVRTC) each give a
#      one-line error and leave the previous package intact and no other file;
#   2. a compile killed with SIGKILL at several moments, and one killed by SIGXFSZ in the
#      middle of writing the package, leave the previous package intact and no temporary file;
#   3. two compiles of different graphs racing to the same output leave one whole package,
#      byte-identical to one of them;
#   4. inspect, dump, run --emulate and run refuse truncated packages and random byte flips
#      with exit status 1 and one line naming the file (never a crash or an internal error);
#      dump writes nothing from a damaged package.
#
#   hardening_test.sh FUSERC SOURCE_DIR WORK_DIR
set -euo pipefail

fuserc=$(realpath "$1")
src=$(realpath "$2")
work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
cd "$work"
export FUSERC_CACHE_DIR=$work/cache
unset XDG_CACHE_HOME

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
g1=$src/tests/corpus/segment_set_chain.json
g2=$src/tests/corpus/softmax_f32.json
in1=$src/tests/corpus/segment_set_chain.0.in.safetensors

"$fuserc" compile "$g1" -o ref1.fpkg -q
"$fuserc" compile "$g2" -o ref2.fpkg -q
size=$(stat -c %s ref1.fpkg)
[ "$size" -gt 16384 ] || fail "the reference package is too small for the disk-full case"

# A fresh output folder holding the previous package (ref2) only.
fresh_out() {
  rm -rf out
  mkdir out
  cp ref2.fpkg out/p.fpkg
}
# The output folder still holds exactly the previous package, unchanged.
intact() {  # intact WHAT
  cmp -s ref2.fpkg out/p.fpkg || fail "$1: the previous package changed"
  local files
  files=$(ls -A out)
  [ "$files" = "p.fpkg" ] || fail "$1: the output folder holds: $(echo $files)"
}
one_line_error() {  # one_line_error WHAT FILE PATTERN
  [ "$(wc -l <"$2")" -eq 1 ] || fail "$1: not one line: $(cat "$2")"
  grep -q "$3" "$2" || fail "$1: expected '$3', got: $(cat "$2")"
}

# ---- 1. Failures that the compile sees ----
fresh_out
rc=0
(trap '' XFSZ; ulimit -f 8; exec "$fuserc" compile "$g1" -o out/p.fpkg --no-cache -q) \
  2>err.txt || rc=$?
[ "$rc" -eq 1 ] || fail "disk full: exit status $rc"
one_line_error "disk full" err.txt "^fuserc: error: out/p.fpkg: cannot write: File too large$"
intact "disk full"

rc=0
"$fuserc" compile "$g1" -o missing/p.fpkg -q 2>err.txt || rc=$?
[ "$rc" -eq 1 ] || fail "missing output folder: exit status $rc"
one_line_error "missing output folder" err.txt "missing/p.fpkg: cannot write: No such file"
[ ! -e missing ] || fail "missing output folder: it was created"
touch not-a-folder
rc=0
"$fuserc" compile "$g1" -o not-a-folder/p.fpkg -q 2>err.txt || rc=$?
[ "$rc" -eq 1 ] || fail "output folder is a file: exit status $rc"
one_line_error "output folder is a file" err.txt "not-a-folder/p.fpkg: cannot write: Not a directory"
if [ "$(id -u)" != 0 ]; then  # root writes anywhere
  fresh_out
  chmod 555 out
  rc=0
  "$fuserc" compile "$g1" -o out/p.fpkg -q 2>err.txt || rc=$?
  chmod 755 out
  [ "$rc" -eq 1 ] || fail "read-only output folder: exit status $rc"
  one_line_error "read-only output folder" err.txt "out/p.fpkg: cannot write: Permission denied"
  intact "read-only output folder"
fi

fresh_out
rc=0
FUSERC_TEST_FAIL_NVRTC=1 "$fuserc" compile "$g1" -o out/p.fpkg --no-cache -q 2>err.txt || rc=$?
[ "$rc" -eq 3 ] || fail "NVRTC failure: exit status $rc"
grep -q "FUSERC_TEST_FAIL_NVRTC" err.txt || fail "NVRTC failure: the log is not shown: $(cat err.txt)"
# The failed kernels' sources are saved beside the output for the bug report; nothing else.
rm -f out/__failed_*.cu
intact "NVRTC failure"

# ---- 2. Killed compiles ----
for delay in 0.05 0.3 1 2; do
  fresh_out
  "$fuserc" compile "$g1" -o out/p.fpkg --no-cache -q 2>/dev/null &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # A compile that finished before the kill wrote the whole new package.
  if cmp -s ref1.fpkg out/p.fpkg; then cp ref2.fpkg out/p.fpkg; fi
  intact "compile killed after ${delay}s"
done
# Killed by SIGXFSZ in the middle of writing the package itself.
fresh_out
rc=0
{ (ulimit -f 8; exec "$fuserc" compile "$g1" -o out/p.fpkg --no-cache -q) 2>/dev/null || rc=$?; } 2>/dev/null
[ "$rc" -eq $((128 + $(kill -l XFSZ))) ] || fail "the write was not killed by SIGXFSZ ($rc)"
intact "compile killed while writing"

# ---- 3. Two compiles racing to one output ----
for round in 1 2 3; do
  rm -rf race && mkdir race
  "$fuserc" compile "$g1" -o race/p.fpkg -q &
  a=$!
  "$fuserc" compile "$g2" -o race/p.fpkg -q &
  b=$!
  wait "$a" || fail "race $round: the first compile failed"
  wait "$b" || fail "race $round: the second compile failed"
  cmp -s ref1.fpkg race/p.fpkg || cmp -s ref2.fpkg race/p.fpkg ||
    fail "race $round: the package is neither whole package"
  [ "$(ls -A race)" = "p.fpkg" ] || fail "race $round: left $(ls -A race)"
  "$fuserc" inspect race/p.fpkg >/dev/null || fail "race $round: the package does not load"
done

# ---- 4. Damaged packages, every reading command ----
readers() {  # readers PKG: runs each reader on PKG; prints "name rc" lines, errors in err-NAME
  set +e
  "$fuserc" inspect "$1" >/dev/null 2>err-inspect; echo "inspect $?"
  rm -rf dumped
  "$fuserc" dump "$1" -d dumped >/dev/null 2>err-dump; echo "dump $?"
  "$fuserc" run "$1" --emulate --inputs "$in1" --outputs o.safetensors >/dev/null 2>err-emulate
  echo "emulate $?"
  "$fuserc" run "$1" --inputs "$in1" --outputs o.safetensors >/dev/null 2>err-run; echo "run $?"
}
check_refused() {  # check_refused PKG WHAT MUST_ALL_FAIL(yes|no)
  while read -r name rc; do
    if [ "$rc" -eq 0 ]; then
      # Only a flip in bytes this command never reads (another kernel's blob) goes unseen.
      [ "$3" = no ] || fail "$name accepted $2"
      [ "$name" = emulate ] || [ "$name" = run ] || fail "$name accepted $2"
      continue
    fi
    [ "$rc" -eq 1 ] || fail "$name: exit status $rc on $2: $(cat "err-$name")"
    [ "$name" != dump ] || [ ! -e dumped ] || fail "dump wrote files from $2"
    [ "$(wc -l <"err-$name")" -eq 1 ] || fail "$name: not one line on $2: $(cat "err-$name")"
    grep -q "internal error" "err-$name" && fail "$name: internal error on $2: $(cat "err-$name")"
    # GPU-less machines stop `run` at the driver: that too is one clean line.
    grep -q "^fuserc: error: \(bad.fpkg\|no CUDA driver\|no CUDA device\)" "err-$name" ||
      fail "$name: the error on $2 does not name the file: $(cat "err-$name")"
  done < <(readers "$1")
}
cp ref1.fpkg bad.fpkg
"$fuserc" inspect bad.fpkg >/dev/null || fail "inspect refused the intact package"
"$fuserc" dump bad.fpkg -d dumped >/dev/null || fail "dump refused the intact package"
"$fuserc" run bad.fpkg --emulate --inputs "$in1" --outputs o.safetensors >/dev/null ||
  fail "run --emulate refused the intact package"
for len in 0 1 7 8 100 1000 $((size / 3)) $((size / 2)) $((size - 64)) $((size - 1)); do
  head -c "$len" ref1.fpkg >bad.fpkg
  check_refused bad.fpkg "a package truncated to $len bytes" yes
done
RANDOM=12
for trial in $(seq 1 16); do
  cp ref1.fpkg bad.fpkg
  offset=$(((RANDOM * 32768 + RANDOM) % size))
  byte=$(((RANDOM % 255) + 1))
  orig=$(od -An -tu1 -j "$offset" -N1 ref1.fpkg | tr -d ' ')
  printf "$(printf '\\%03o' $((orig ^ byte)))" |
    dd of=bad.fpkg bs=1 seek="$offset" conv=notrunc status=none
  check_refused bad.fpkg "byte $offset xor $byte" no
  # inspect reads and checks every byte: it refuses every flip.
  "$fuserc" inspect bad.fpkg >/dev/null 2>&1 && fail "inspect accepted byte $offset xor $byte"
done
echo "hardening: all checks passed"
