#!/usr/bin/env bash
# `fuserc compile` as a step of other people's builds:
#   1. reproducibility: the same graph and options give a byte-identical package whatever the
#      working directory, TMPDIR, -j, the cache (none, cold, warm, shared, damaged) or the time
#      (a preloaded library moves the wall clock ten years on);
#   2. eight concurrent compiles sharing one cache, on the same and on different graphs, all
#      succeed and write packages identical to serial ones, cold and warm;
#   3. --depfile: Make rebuilds exactly when the graph changes;
#   4. `fuserc cache stats|clear`;
#   5. the progress line: on a terminal only, never with --quiet.
#
#   compile_pipeline_test.sh FUSERC FAKE_CLOCK_LIB SOURCE_DIR WORK_DIR
set -euo pipefail

fuserc=$(realpath "$1")
fake_clock=$(realpath "$2")
src=$(realpath "$3")
work=$4
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
cd "$work"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Never the user's cache.
export FUSERC_CACHE_DIR=$work/default-cache
unset XDG_CACHE_HOME

g1=$src/tests/corpus/segment_set_chain.json
g2=$src/tests/corpus/bias_gelu_bf16.json
g3=$src/tests/corpus/softmax_f32.json

# ---- 1. Reproducibility ----
"$fuserc" compile "$g1" -o ref1.fpkg --no-cache -j 1 -q
[ -s ref1.fpkg ] || fail "no reference package"
same() {  # same REFERENCE PACKAGE WHAT
  cmp -s "$1" "$2" || fail "$3: $2 differs from $1"
}

mkdir -p elsewhere/deeper tmp-a tmp-b
rel_g1=$(realpath --relative-to="$work/elsewhere/deeper" "$g1")
(cd elsewhere/deeper &&
  TMPDIR=$work/tmp-a "$fuserc" compile "$rel_g1" -o p.fpkg -j 2 --cache-dir ../../cache-a -q)
same ref1.fpkg elsewhere/deeper/p.fpkg "another folder, relative paths, TMPDIR, -j 2, cold cache"
[ -d cache-a/nvrtc ] || fail "--cache-dir did not create cache-a/nvrtc"
(cd elsewhere && TMPDIR=$work/tmp-b "$fuserc" compile "$g1" -o warm.fpkg -j 1 \
  --cache-dir ../cache-a -q)
same ref1.fpkg elsewhere/warm.fpkg "warm cache, -j 1, another TMPDIR"

year_now=$(date +%Y)
year_fake=$(LD_PRELOAD=$fake_clock date +%Y)
[ "$year_fake" -ge $((year_now + 9)) ] || fail "the fake clock does not work ($year_fake)"
LD_PRELOAD=$fake_clock "$fuserc" compile "$g1" -o later-nocache.fpkg --no-cache -q
same ref1.fpkg later-nocache.fpkg "ten years later, no cache"
LD_PRELOAD=$fake_clock "$fuserc" compile "$g1" -o later-warm.fpkg --cache-dir cache-a -q
same ref1.fpkg later-warm.fpkg "ten years later, warm cache"

FUSERC_CACHE_DIR=$work/shared "$fuserc" compile "$g1" -o shared.fpkg -q
same ref1.fpkg shared.fpkg "cache from FUSERC_CACHE_DIR"
[ -d shared/nvrtc ] || fail "FUSERC_CACHE_DIR was not used"
(unset FUSERC_CACHE_DIR && XDG_CACHE_HOME=$work/xdg HOME=$work/home \
  "$fuserc" compile "$g1" -o xdg.fpkg -q)
same ref1.fpkg xdg.fpkg "cache under XDG_CACHE_HOME"
[ -d xdg/fuserc/nvrtc ] || fail "XDG_CACHE_HOME/fuserc was not used"
(unset FUSERC_CACHE_DIR && HOME=$work/home "$fuserc" compile "$g1" -o home.fpkg -q)
[ -d home/.cache/fuserc/nvrtc ] || fail "~/.cache/fuserc was not used"
same ref1.fpkg home.fpkg "cache under ~/.cache"

# A damaged entry is discarded and rebuilt.
entry=$(find cache-a/nvrtc -type f -regextype posix-extended -regex '.*/[0-9a-f]{32}' -size +2k | head -1)
[ -n "$entry" ] || fail "no cache entry found"
printf 'garbage' | dd of="$entry" bs=1 seek=100 conv=notrunc status=none
"$fuserc" compile "$g1" -o damaged.fpkg --cache-dir cache-a -q
same ref1.fpkg damaged.fpkg "a damaged cache entry"
stats=$("$fuserc" cache stats --cache-dir cache-a)
grep -q "damaged entries discarded 1 " <<<"$stats" || fail "the damaged entry was not counted: $stats"

# ---- 2. Eight concurrent compiles sharing one cache ----
"$fuserc" compile "$g2" -o ref2.fpkg --no-cache -q
"$fuserc" compile "$g3" -o ref3.fpkg --no-cache -q
graphs=("$g1" "$g1" "$g1" "$g2" "$g2" "$g3" "$g3" "$g1")
refs=(ref1 ref1 ref1 ref2 ref2 ref3 ref3 ref1)
for round in cold warm; do
  pids=()
  for i in "${!graphs[@]}"; do
    "$fuserc" compile "${graphs[$i]}" -o "conc-$round-$i.fpkg" --cache-dir concurrent -j 2 -q \
      2>"conc-$round-$i.err" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "concurrent compile $i ($round) failed: $(cat "conc-$round-$i.err")"
    [ ! -s "conc-$round-$i.err" ] || fail "concurrent compile $i ($round) said: $(cat "conc-$round-$i.err")"
    same "${refs[$i]}.fpkg" "conc-$round-$i.fpkg" "concurrent compile $i ($round cache)"
  done
done
leftovers=$(find concurrent -name '.*.tmp.*' | wc -l)
[ "$leftovers" -eq 0 ] || fail "$leftovers temporary files left in the cache"

# ---- 3. --depfile ----
mkdir -p "dir with space"
cp "$g2" "dir with space/graph.json"
"$fuserc" compile "dir with space/graph.json" -o "dir with space/out.fpkg" \
  --depfile "dir with space/out.d" -q
expected='dir\ with\ space/out.fpkg: dir\ with\ space/graph.json'
[ "$(cat "dir with space/out.d")" = "$expected" ] ||
  fail "depfile: got '$(cat "dir with space/out.d")', expected '$expected'"
mkdir -p make
cp "$g2" make/graph.json
cat >make/Makefile <<EOF
pkg.fpkg:
	"$fuserc" compile graph.json -o pkg.fpkg --depfile pkg.d --no-cache -q
-include pkg.d
EOF
make -s -C make >/dev/null
[ -f make/pkg.fpkg ] || fail "make did not build the package"
make -s -q -C make || fail "make wants to rebuild right after a build"
touch -d '+2 seconds' make/graph.json
if make -s -q -C make; then fail "make does not rebuild after the graph changed"; fi

# ---- 4. fuserc cache stats|clear ----
stats=$("$fuserc" cache stats --cache-dir concurrent)
grep -q "^cache folder: concurrent$" <<<"$stats" || fail "stats: $stats"
entries=$(sed -n 's/^nvrtc: \([0-9]*\) entries.*/\1/p' <<<"$stats")
[ "${entries:-0}" -gt 0 ] || fail "stats shows no entries: $stats"
grep -q "hits [1-9]" <<<"$stats" || fail "stats shows no hits: $stats"
cleared=$("$fuserc" cache clear --cache-dir concurrent)
grep -q "cleared concurrent: $entries NVRTC entries" <<<"$cleared" ||
  fail "clear did not report $entries entries: $cleared"
stats=$("$fuserc" cache --cache-dir concurrent stats)
grep -q "^nvrtc: 0 entries" <<<"$stats" || fail "clear left entries: $stats"
if "$fuserc" compile "$g1" -o x.fpkg --cache-max-mb 0 2>/dev/null; then
  fail "--cache-max-mb 0 was accepted"
fi

# ---- 5. Progress line ----
"$fuserc" compile "$g3" -o p1.fpkg --no-cache -j 1 >out.txt 2>err.txt
[ ! -s err.txt ] || fail "progress was written without a terminal: $(cat err.txt)"
# NVRTC runs in worker processes forked while fuserc has a single thread; the line's clock once
# had a thread of its own, and under AddressSanitizer a worker forked while that thread started
# waited for ever on the allocator's lock. A hang fails here instead of stopping CI.
on_terminal() {  # on_terminal OUTPUT COMMAND
  local rc=0
  timeout 300 script -qec "$2" /dev/null >"$1" || rc=$?
  ((rc != 124)) || fail "hung on a terminal: $2"
  ((rc == 0)) || fail "failed on a terminal ($rc): $2: $(cat -v "$1")"
}
on_terminal tty.txt "'$fuserc' compile '$g3' -o p2.fpkg --no-cache -j 1"
# The count is the graph's compilations (variants x architectures), whatever the schedulers make.
total=$(grep -ao "NVRTC: kernel 1 of [0-9]*, " tty.txt | head -1 | sed 's/.* of \([0-9]*\), /\1/')
[ -n "$total" ] || fail "no progress line on a terminal: $(cat -v tty.txt)"
grep -q "NVRTC: kernel $total of $total, " tty.txt ||
  fail "progress did not reach the end: $(cat -v tty.txt)"
# The elapsed time is redrawn while NVRTC works, not only as kernels finish.
times=$(grep -ao "NVRTC: kernel [0-9]* of $total, [0-9.]* s" tty.txt | awk '{print $(NF-1)}' | sort -u | wc -l)
((times > total + 1)) || fail "the clock did not advance between kernels ($times times): $(cat -v tty.txt)"
on_terminal quiet.txt "'$fuserc' compile '$g3' -o p3.fpkg --no-cache -j 1 --quiet"
[ ! -s quiet.txt ] || fail "--quiet printed on a terminal: $(cat -v quiet.txt)"
same ref3.fpkg p2.fpkg "compiled on a terminal"

rm -rf "$work"
echo "compile pipeline: all checks passed"
