#!/usr/bin/env bash
# compare_codegen.sh - compare the CUDA fuserc generates at two git revisions (after nvFuser's
# tools/compare_codegen.sh).
#
# Builds fuserc at revisions A and B (only the fuserc target, with ccache when installed; each
# build is kept by commit in the work folder and reused), writes every kernel of every graph
# with each as __tmp_<kernel>.cu (and __tmp_<kernel>.ptx with --ptx), then diffs the shared
# preamble once and each kernel by its stable name. Prints a unified diff per changed kernel
# and, last, "N kernels differ in M of K graphs".
#
#   scripts/compare_codegen.sh [options] [GRAPH_OR_FOLDER...]
#
#   --a REV          the baseline (default: the merge base of HEAD and main)
#   --b REV          the revision compared with it (default: HEAD)
#   GRAPH_OR_FOLDER  graphs (*.json) to compile (default: the repository's tests/corpus and
#                    tests/graphs); also --graphs PATH
#   --ptx            also compile with NVRTC and compare the PTX (--arch LIST, default sm_80)
#   --html FILE      also write one self-contained HTML report (side by side, a collapsible
#                    section per kernel)
#   --out DIR        keep the kernels in DIR/a and DIR/b (default: a temporary folder)
#   --work-dir DIR   where builds are kept (default: ${XDG_CACHE_HOME:-~/.cache}/fuserc/compare_codegen)
#   -C DIR           the repository (default: the one holding this script)
#   --allow-dirty    compare although the working tree has uncommitted changes (they are not
#                    part of any revision, so they are not compared)
#   -q, --quiet      print only the summary line
#
# Exit status: 0 nothing differs, 1 something differs, 2 usage or build error.
# Environment: JOBS (parallel build jobs, default: the number of cores).
set -uo pipefail

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() {  # a usage or build error
  echo "compare_codegen: error: $*" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
rev_a="" rev_b=HEAD ptx=0 archs=sm_80 html="" out="" quiet=0 allow_dirty=0
work_dir=${XDG_CACHE_HOME:-$HOME/.cache}/fuserc/compare_codegen
graphs=()
while (($#)); do
  case "$1" in
    --a) [ $# -ge 2 ] || die "--a needs a revision"; rev_a=$2; shift ;;
    --b) [ $# -ge 2 ] || die "--b needs a revision"; rev_b=$2; shift ;;
    --graphs) [ $# -ge 2 ] || die "--graphs needs a path"; graphs+=("$2"); shift ;;
    --ptx) ptx=1 ;;
    --arch) [ $# -ge 2 ] || die "--arch needs a list"; archs=$2; shift ;;
    --html) [ $# -ge 2 ] || die "--html needs a file"; html=$2; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
    --work-dir) [ $# -ge 2 ] || die "--work-dir needs a folder"; work_dir=$2; shift ;;
    -C) [ $# -ge 2 ] || die "-C needs a folder"; repo=$2; shift ;;
    --allow-dirty) allow_dirty=1 ;;
    -q|--quiet) quiet=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) graphs+=("$1") ;;
  esac
  shift
done

git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git repository"
repo=$(git -C "$repo" rev-parse --show-toplevel)
if [ "$allow_dirty" = 0 ] && [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  die "the working tree of $repo has uncommitted changes, which no revision holds; commit them, or pass --allow-dirty to compare the commits anyway"
fi
if [ -z "$rev_a" ]; then
  base_branch=main
  git -C "$repo" rev-parse --verify -q main >/dev/null || base_branch=origin/main
  rev_a=$(git -C "$repo" merge-base "$base_branch" HEAD 2>/dev/null) ||
    die "no merge base of HEAD and main (give --a REV)"
fi
commit_of() {
  git -C "$repo" rev-parse --verify -q "$1^{commit}" || die "unknown revision '$1'"
}
sha_a=$(commit_of "$rev_a") || exit 2
sha_b=$(commit_of "$rev_b") || exit 2

# The graphs, as absolute paths, sorted, each with a unique name.
[ ${#graphs[@]} -gt 0 ] || graphs=("$repo/tests/corpus" "$repo/tests/graphs")
graph_files=()
for g in "${graphs[@]}"; do
  if [ -d "$g" ]; then
    while IFS= read -r f; do graph_files+=("$f"); done < <(find "$g" -maxdepth 1 -name '*.json' | LC_ALL=C sort)
  elif [ -f "$g" ]; then
    graph_files+=("$(realpath "$g")")
  else
    die "no graph or folder '$g'"
  fi
done
[ ${#graph_files[@]} -gt 0 ] || die "no graphs (*.json) in ${graphs[*]}"
for i in "${!graph_files[@]}"; do graph_files[$i]=$(realpath "${graph_files[$i]}"); done

if [ -n "$html" ]; then
  command -v python3 >/dev/null || die "--html needs python3"
  touch "$html" 2>/dev/null || die "cannot write '$html'"
  html=$(realpath "$html")
fi

log() { [ "$quiet" = 1 ] || echo "compare_codegen: $*" >&2; }

# Builds fuserc at commit $1 (once: kept as WORK_DIR/<sha>/fuserc); prints its path.
build_fuserc() {
  local sha=$1 dest="$work_dir/$1"
  if [ -x "$dest/fuserc" ]; then
    log "using the build of ${sha:0:12} in $dest"
    echo "$dest/fuserc"
    return 0
  fi
  local root="$work_dir/$sha.building.$$"
  rm -rf "$root"
  mkdir -p "$root/src" "$dest" || die "cannot create $root"
  log "building fuserc at ${sha:0:12} in $root (log: $root/build.log)"
  git -C "$repo" archive "$sha" | tar -x -C "$root/src" || die "cannot extract $sha"
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true  # hits across builds of other commits
  fi
  if ! { cmake -S "$root/src" -B "$root/build" -DCMAKE_BUILD_TYPE=Release \
           -DFUSERC_BUILD_TESTS=OFF "${launcher[@]}" &&
         cmake --build "$root/build" --target fuserc -j "${JOBS:-$(nproc)}"; } >"$root/build.log" 2>&1; then
    tail -n 30 "$root/build.log" >&2
    die "the build of fuserc at ${sha:0:12} failed (log: $root/build.log)"
  fi
  [ -x "$root/build/cmd/fuserc" ] || die "the build at ${sha:0:12} made no cmd/fuserc"
  cp "$root/build/cmd/fuserc" "$dest/fuserc.tmp.$$" && mv "$dest/fuserc.tmp.$$" "$dest/fuserc" ||
    die "cannot store the build in $dest"
  rm -rf "$root"
  echo "$dest/fuserc"
}

mkdir -p "$work_dir" || die "cannot create $work_dir"
work_dir=$(realpath "$work_dir")
fuserc_a=$(build_fuserc "$sha_a") || exit 2
fuserc_b=$(build_fuserc "$sha_b") || exit 2

if [ -n "$out" ]; then
  rm -rf "$out/a" "$out/b" "$out/changed.txt"
  mkdir -p "$out" || die "cannot create $out"
  out=$(realpath "$out")
else
  out=$(mktemp -d) || die "cannot create a temporary folder"
  trap 'rm -rf "$out"' EXIT
fi

# Writes the kernels of graph $3 compiled by $2 into $1/<name>/ (a failure is recorded in
# __error.txt there); the preamble goes to $1/__preamble.cuh.
names=()
for g in "${graph_files[@]}"; do
  name=$(basename "$g" .json)
  n=1
  while printf '%s\n' "${names[@]}" | grep -qxF "$name"; do n=$((n + 1)); name="$(basename "$g" .json)_$n"; done
  names+=("$name")
done
collect() {
  local side=$1 fuserc=$2 i dir
  mkdir -p "$out/$side"
  for i in "${!graph_files[@]}"; do
    dir="$out/$side/${names[$i]}"
    mkdir -p "$dir"
    if ! "$fuserc" codegen "${graph_files[$i]}" -d "$dir" --kernel-only >/dev/null 2>"$dir/__error.txt"; then
      continue
    fi
    [ -f "$out/$side/__preamble.cuh" ] || mv "$dir/__preamble.cuh" "$out/$side/__preamble.cuh"
    rm -f "$dir/__preamble.cuh"
    if [ "$ptx" = 1 ]; then
      local tmp="$dir/.compiled"
      mkdir -p "$tmp"
      if "$fuserc" compile "${graph_files[$i]}" -o "$tmp/p.fpkg" --arch "$archs" -q 2>"$dir/__error.txt" &&
         "$fuserc" dump "$tmp/p.fpkg" -d "$tmp" 2>"$dir/__error.txt"; then
        mv "$tmp"/*.ptx "$dir"/ 2>/dev/null
      fi
      rm -rf "$tmp"
    fi
    [ -s "$dir/__error.txt" ] || rm -f "$dir/__error.txt"
  done
}
log "writing kernels of ${#graph_files[@]} graphs with ${sha_a:0:12} (a) and ${sha_b:0:12} (b)"
collect a "$fuserc_a"
collect b "$fuserc_b"

# Diffs. changed.txt lists what differs, one "graph<TAB>file" per line (graph "." for the
# preamble), for the HTML report.
changed_list="$out/changed.txt"
: >"$changed_list"
show_diff() {  # show_diff LABEL FILE_A FILE_B
  local a=$2 b=$3
  [ -e "$a" ] || a=/dev/null
  [ -e "$b" ] || b=/dev/null
  if [ "$quiet" = 0 ]; then
    diff -u --label "a/$1" --label "b/$1" "$a" "$b"
  fi
  return 0
}
preamble_differs=0
if ! cmp -s "$out/a/__preamble.cuh" "$out/b/__preamble.cuh"; then
  preamble_differs=1
  printf '.\t__preamble.cuh\n' >>"$changed_list"
  show_diff __preamble.cuh "$out/a/__preamble.cuh" "$out/b/__preamble.cuh"
fi
kernels_differ=0
graphs_differ=0
for name in "${names[@]}"; do
  changed_kernels=()
  while IFS= read -r file; do
    [ -n "$file" ] || continue
    if ! cmp -s "$out/a/$name/$file" "$out/b/$name/$file"; then
      printf '%s\t%s\n' "$name" "$file" >>"$changed_list"
      show_diff "$name/$file" "$out/a/$name/$file" "$out/b/$name/$file"
      kernel=${file%.cu}
      kernel=${kernel%.ptx}
      printf '%s\n' "${changed_kernels[@]}" | grep -qxF "$kernel" || changed_kernels+=("$kernel")
    fi
  done < <( (ls -A "$out/a/$name"; ls -A "$out/b/$name") 2>/dev/null | LC_ALL=C sort -u)
  if [ ${#changed_kernels[@]} -gt 0 ]; then
    graphs_differ=$((graphs_differ + 1))
    for k in "${changed_kernels[@]}"; do
      [ "$k" = __error.txt ] || kernels_differ=$((kernels_differ + 1))
    done
  fi
done

summary="$kernels_differ kernels differ in $graphs_differ of ${#names[@]} graphs"
[ "$preamble_differs" = 0 ] || summary="$summary; the preamble differs"
if [ -n "$html" ]; then
  python3 "$(dirname "$0")/codegen_report.py" --a "$out/a" --b "$out/b" --changed "$changed_list" \
    --title "fuserc codegen: ${sha_a:0:12} (a) vs ${sha_b:0:12} (b)" --summary "$summary" \
    --output "$html" || die "could not write the HTML report"
  log "HTML report: $html"
fi
echo "$summary"
if [ "$kernels_differ" -gt 0 ] || [ "$graphs_differ" -gt 0 ] || [ "$preamble_differs" = 1 ]; then
  exit 1
fi
exit 0
