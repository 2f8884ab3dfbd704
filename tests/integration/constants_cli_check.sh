#!/usr/bin/env bash
# Constants and sizes from the command line (issue 22): `compile` with constants stored outside
# the FlatBuffer (--external-data-min) and a depfile naming the weights file; `inspect` lists
# the constants; `inputs` writes no constant; `run --emulate` gives what `eval` gives; passing
# a constant, or a damaged constant in the package, is one clear error and no output file.
#
#   constants_cli_check.sh FUSERC SOURCE_DIR WORKDIR   (SOURCE_DIR: integration/constants_cli)
set -euo pipefail
fuserc=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cp "$src/graph.json" "$src/w.safetensors" "$work/"
cd "$work"
fail() { echo "constants_cli_check: $*"; exit 1; }

"$fuserc" compile graph.json -o g.fpkg --external-data-min 8 --depfile g.d -q
grep -q "w.safetensors" g.d || fail "the depfile does not name the weights file"
"$fuserc" inspect g.fpkg > inspect.txt
grep -q "constants (the package's; never passed):" inspect.txt || fail "inspect lists no constants"
grep -q "c f32\[4\], 16 bytes, hash [0-9a-f]\{16\}, external" inspect.txt ||
  fail "inspect does not show c as external"
"$fuserc" inputs graph.json -o in.st --bind N=7
python_free_names=$(head -c 200 in.st | tr -c 'a-z_"' ' ')
case "$python_free_names" in *'"c"'*) fail "inputs wrote the constant c" ;; esac
"$fuserc" run g.fpkg --inputs in.st --outputs emu.st --emulate
"$fuserc" eval graph.json --inputs in.st --outputs eval.st
cmp -s emu.st eval.st || fail "run --emulate and eval differ"

# A constant passed in the inputs file is refused, naming it; nothing is written. (The inputs
# of the same graph with c an ordinary input hold x and c.)
sed 's/, "data": \[1, 2, "inf", -0.5\]//' graph.json > graph_c_input.json
"$fuserc" inputs graph_c_input.json -o with_c.st --bind N=7
for cmd in "run g.fpkg --emulate" "eval graph.json"; do
  set +e
  # shellcheck disable=SC2086
  "$fuserc" $cmd --inputs with_c.st --outputs bad.st 2> bad.err
  rc=$?
  set -e
  [ "$rc" = 1 ] || fail "$cmd with a constant passed: exit $rc, want 1"
  grep -q "with_c.st: tensor 'c' is a constant of the graph" bad.err || fail "$cmd: $(cat bad.err)"
  [ ! -e bad.st ] || fail "$cmd: an output file was left"
done

# Damage one byte of the external section (the last constant, just before the 48-byte
# trailer's 256-aligned neighbourhood): loading still works, the run refuses it.
size=$(stat -c %s g.fpkg)
cp g.fpkg damaged.fpkg
python3 - "$size" <<'PY'
import sys
size = int(sys.argv[1])
with open("damaged.fpkg", "r+b") as f:
    f.seek(size - 48)
    t = f.read(48)
    off = int.from_bytes(t[24:32], "little")
    assert int.from_bytes(t[32:40], "little") > 0, "no external data"
    f.seek(off + 1)
    b = f.read(1)
    f.seek(off + 1)
    f.write(bytes([b[0] ^ 0x5a]))
PY
set +e
"$fuserc" run damaged.fpkg --inputs in.st --outputs damaged.st --emulate 2> damaged.err
rc=$?
set -e
[ "$rc" = 1 ] || fail "a damaged constant: exit $rc, want 1"
grep -q "corrupted package: the data of constant 'c' does not match its hash" damaged.err ||
  fail "a damaged constant: $(cat damaged.err)"
[ "$(wc -l < damaged.err)" = 1 ] || fail "more than one line"
[ ! -e damaged.st ] || fail "an output file was left"
echo "constants_cli_check: ok"
