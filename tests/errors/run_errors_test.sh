#!/usr/bin/env bash
# The errors corpus: every CASE.json in this folder is a graph that breaks the input contract
# (docs/FUSION_FORMAT.md) and CASE.expected is the one line fuserc must print for it, with
# the literal text FILE standing for the graph path as given on the command line.
#
# usage: run_errors_test.sh FUSERC_BINARY ERRORS_DIR
#
# For each case, runs `fuserc check --quiet CASE.json` from inside ERRORS_DIR and requires:
# exit status exactly 1, nothing on stdout, and stderr exactly one line equal to the expected
# one (no crash, abort or internal error). Every .json must have a .expected and vice versa.
# Prints one line per failing case and a summary; exits 1 if any case failed.
set -u
shopt -u patsub_replacement 2>/dev/null || true

if [[ $# -ne 2 ]]; then
  echo "usage: $0 FUSERC_BINARY ERRORS_DIR" >&2
  exit 2
fi
fuserc=$1
dir=$2
case $fuserc in
  /*) ;;
  *) fuserc=$PWD/$fuserc ;;
esac
if [[ ! -x $fuserc ]]; then
  echo "errors corpus: $fuserc is not an executable" >&2
  exit 2
fi
cd "$dir" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuserc-errors.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# Limit each run so that a hang is a failure, not a stuck test.
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then timeout_cmd=(timeout 30); fi

# Shows a captured output in a failure line: its first 600 bytes, newlines as '|', other
# control bytes as '?'.
show_text() {
  LC_ALL=C head -c 600 "$1" | LC_ALL=C tr '\n' '|' | LC_ALL=C tr -c '[:print:]|' '?' |
    LC_ALL=C sed 's/|$//'
}

total=0
failed=0
fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}

shopt -s nullglob
for exp in *.expected; do
  [[ -e ${exp%.expected}.json ]] || fail "${exp%.expected}" "$exp has no ${exp%.expected}.json"
done

for json in *.json; do
  total=$((total + 1))
  name=${json%.json}
  if [[ ! -f $name.expected ]]; then
    fail "$name" "$json has no $name.expected"
    continue
  fi
  # The expected line, with FILE replaced by the file name as passed to fuserc.
  expected_lines=$(wc -l <"$name.expected")
  IFS= read -r expected <"$name.expected"
  if [[ $expected_lines -ne 1 || -z $expected ]]; then
    fail "$name" "$name.expected must hold exactly one non-empty line"
    continue
  fi
  printf '%s\n' "${expected//FILE/$json}" >"$tmp/expected"

  "${timeout_cmd[@]}" "$fuserc" check --quiet "$json" >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?

  problems=()
  if LC_ALL=C grep -a -q -E 'terminate called|Segmentation fault|Aborted|internal error' \
    "$tmp/out" "$tmp/err"; then
    problems+=("crash text in the output: $(show_text "$tmp/out") $(show_text "$tmp/err")")
  fi
  if [[ $status -eq 124 && ${#timeout_cmd[@]} -gt 0 ]]; then
    problems+=("timed out")
  elif [[ $status -gt 128 ]]; then
    problems+=("killed by signal $((status - 128))")
  elif [[ $status -ne 1 ]]; then
    problems+=("exit status $status, expected 1")
  fi
  if [[ -s $tmp/out ]]; then
    problems+=("stdout not empty: $(show_text "$tmp/out")")
  fi
  if ! cmp -s "$tmp/err" "$tmp/expected"; then
    err_lines=$(wc -l <"$tmp/err")
    if [[ ! -s $tmp/err ]]; then
      problems+=("stderr empty; expected: $(show_text "$tmp/expected")")
    elif [[ $err_lines -ne 1 ]] || [[ $(tail -c 1 "$tmp/err" | od -An -c | tr -d ' ') != '\n' ]]; then
      problems+=("stderr is not exactly one line: $(show_text "$tmp/err")")
    else
      problems+=("stderr differs; got: $(show_text "$tmp/err") ; expected: $(show_text "$tmp/expected")")
    fi
  fi
  if [[ ${#problems[@]} -gt 0 ]]; then
    msg=${problems[0]}
    for p in "${problems[@]:1}"; do msg+="; $p"; done
    fail "$name" "$msg"
  fi
done

echo "errors corpus: $total cases, $failed failed"
[[ $failed -eq 0 ]]
