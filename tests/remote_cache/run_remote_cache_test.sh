#!/usr/bin/env bash
# The remote compile cache (`fuserc compile --cache-url`) against a real HTTP server: nginx
# on 127.0.0.1 with PUT enabled (nginx.conf.in), entries at URL/ac/<key twice>.
#   a. a cold build fills the local cache and PUTs every NVRTC result to the server;
#   b. a second machine (an empty local cache) compiles nothing: every kernel is fetched, the
#      packages are byte-identical, and a local hit never asks the server;
#   c. --cache-read-only never PUTs;
#   d. FUSERC_CACHE_TOKEN is sent as "Authorization: Bearer ..." and never printed;
#   e. altered and truncated entries on the server are detected, recompiled and PUT again;
#   f. a server that answers too slowly: --cache-timeout, one warning, local compile;
#   g. the server going away during one compile, and between the compiles of a build: every
#      compile succeeds with one warning and the same package;
#   h. (run before g.) a WebDAV server that makes no folders on PUT (409, as Apache's mod_dav;
#      folderless_dav.py): fuserc makes URL/ and URL/ac/ with MKCOL and PUTs those entries again.
# The server's files all live in a temporary folder, removed on exit with nginx stopped.
#
#   run_remote_cache_test.sh FUSERC GRAPH.json GRAPH.json...
# At least three graphs; builds A, B, D and E (a., b., e.) compile them all (CTest passes the
# whole test corpus), the other steps the first three alone (small ones: each compiles in
# seconds). A graph named twice is compiled once.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ $# -ge 3 ] || fail "usage: $0 FUSERC GRAPH.json GRAPH.json..."
fuserc=$(realpath "$1")
shift
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
conf_template=$script_dir/nginx.conf.in

[ -x "$fuserc" ] || fail "not an executable: $fuserc"
[ -f "$conf_template" ] || fail "missing $conf_template"
nginx=${NGINX:-/usr/sbin/nginx}
[ -x "$nginx" ] || nginx=$(command -v nginx || true)
{ [ -n "$nginx" ] && [ -x "$nginx" ]; } ||
  fail "nginx not found (Debian: apt-get install nginx-light; scripts/setup.sh installs it)"
command -v curl >/dev/null || fail "curl not found (Debian: apt-get install curl)"

# The graphs; their names name the packages.
graphs=()
declare -A seen_graph=()
for g in "$@"; do
  [ -f "$g" ] || fail "no such graph: $g"
  g=$(realpath "$g")
  [ -z "${seen_graph[$g]:-}" ] || continue
  seen_graph[$g]=1
  graphs+=("$g")
done
[ "${#graphs[@]}" -ge 3 ] || fail "need at least three different graphs"
all_graphs=("${graphs[@]}")
small_graphs=("${graphs[@]:0:3}")
name_of() { basename "$1" .json; }

# Nothing from the caller's environment: no user cache, no remote cache, no token, no proxy.
unset FUSERC_CACHE_URL FUSERC_CACHE_TOKEN XDG_CACHE_HOME
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

# ---- The temporary folder, and the cleanup that always runs ----
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuserc-remote-cache.XXXXXX")
export FUSERC_CACHE_DIR=$tmp/default-cache  # never the user's cache
nginx_pid=""                                 # the running nginx master (our child), if any
dav_pid=""                                   # the running folderless_dav.py (section h), if any

# running PID: whether process PID runs (a zombie does not).
running() {
  local state
  state=$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# Stops the nginx master (fast shutdown: it stops its worker, then exits) and waits for it;
# after 5 s, SIGKILL to the master and its children, by id.
stop_nginx() {
  local pid=$nginx_pid
  nginx_pid=""
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    running "$pid" || break
    sleep 0.1
  done
  if running "$pid"; then
    echo "nginx (pid $pid) did not stop in 5 s: killing it" >&2
    local children
    children=$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)
    # shellcheck disable=SC2086  # the children's ids, one word each
    kill -KILL "$pid" $children 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  stop_nginx || true
  if [ -n "$dav_pid" ]; then kill "$dav_pid" 2>/dev/null || true; wait "$dav_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- The server ----
echo_module=""
for m in /usr/share/nginx/modules/ngx_http_echo_module.so \
         /usr/lib/nginx/modules/ngx_http_echo_module.so; do
  if [ -f "$m" ]; then echo_module=$m; break; fi
done

sed_escape() { printf '%s' "$1" | sed 's/[\\|&]/\\&/g'; }

# render_config PORT: nginx.conf.in -> $tmp/nginx.conf
render_config() {
  local keep_root='/^#IF_ROOT#/d' keep_echo='/^#IF_ECHO#/d'
  # The user directive only as root (see nginx.conf.in).
  [ "$(id -u)" = 0 ] && keep_root='s/^#IF_ROOT#//'
  [ -n "$echo_module" ] && keep_echo='s/^#IF_ECHO#//'
  sed -e "$keep_root" -e "$keep_echo" \
      -e "s|@TMP@|$(sed_escape "$tmp")|g" \
      -e "s|@PORT@|$1|g" \
      -e "s|@USER@|$(sed_escape "$(id -un)")|g" \
      -e "s|@GROUP@|$(sed_escape "$(id -gn)")|g" \
      -e "s|@ECHO_MODULE@|$(sed_escape "$echo_module")|g" \
      "$conf_template" > "$tmp/nginx.conf"
}

# http_code URL: the status of a GET, 000 when nothing answers.
http_code() {
  curl -s --noproxy '*' -o /dev/null --max-time 2 -w '%{http_code}' "$1" 2>/dev/null || true
}

# A port nothing listens on: the kernel's choice through python3 when there is one, else a
# random one in 20000-60000 (nginx then fails to start when it is taken, and we try again).
pick_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
      2>/dev/null && return 0
  fi
  echo $((20000 + RANDOM % 40000))
}

# start_nginx PORT: starts nginx on PORT in the background (daemon off: the master is our
# child, its pid also in $tmp/nginx.pid) and waits until it answers. Returns non-zero when it
# exits instead (the port is taken: it gives up after 2.5 s); fails when it never answers.
start_nginx() {
  local port=$1
  render_config "$port"
  mkdir -p "$tmp/dav"
  # Its output to a file: nginx must not hold CTest's pipes.
  "$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
    > "$tmp/nginx-start.log" 2>&1 < /dev/null &
  nginx_pid=$!
  for _ in $(seq 50); do
    if ! running "$nginx_pid"; then
      wait "$nginx_pid" 2>/dev/null || true
      nginx_pid=""
      return 1
    fi
    # The pid file is written once the port is bound: only then is the answer nginx's.
    if [ "$(cat "$tmp/nginx.pid" 2>/dev/null || true)" = "$nginx_pid" ] &&
       [ "$(http_code "http://127.0.0.1:$port/")" != 000 ]; then
      return 0
    fi
    sleep 0.1
  done
  stop_nginx
  echo "--- nginx's error log:" >&2
  cat "$tmp/error.log" "$tmp/nginx-start.log" >&2 || true
  fail "nginx did not answer on port $port within 5 s"
}

echo "== starting nginx"
port=""
for _ in 1 2 3 4 5; do
  candidate=$(pick_port)
  if start_nginx "$candidate"; then
    port=$candidate
    break
  fi
  echo "nginx did not start on port $candidate:"
  cat "$tmp/nginx-start.log"
done
if [ -z "$port" ]; then
  echo "--- nginx's error log:" >&2
  cat "$tmp/error.log" >&2 || true
  fail "nginx would not start on any of 5 ports"
fi
server=http://127.0.0.1:$port
echo "nginx (pid $nginx_pid) on $server"

# The server works as a cache needs: PUT creates folders, GET returns the bytes, 404 when absent.
printf 'probe\n' > "$tmp/probe"
code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -T "$tmp/probe" \
  "$server/probe/ac/0123" || true)
[ "$code" = 201 ] || [ "$code" = 204 ] || fail "the server refused a PUT (HTTP $code)"
[ "$(curl -s --noproxy '*' "$server/probe/ac/0123")" = probe ] || fail "GET after PUT failed"
[ "$(http_code "$server/probe/ac/missing")" = 404 ] || fail "a missing entry is not a 404"
rm -rf "$tmp/dav/probe"

# ---- Helpers ----
# compile_one GRAPH OUT CACHE_DIR [OPTION...]: compiles, stdout and stderr to OUT.stdout and
# OUT.stderr; fails (showing them) when fuserc does.
compile_one() {
  local graph=$1 out=$2 cache=$3
  shift 3
  mkdir -p "$(dirname "$out")"
  if ! "$fuserc" compile "$graph" -o "$out" --cache-dir "$cache" --arch sm_80 -j 2 --quiet \
      "$@" > "$out.stdout" 2> "$out.stderr"; then
    cat "$out.stdout" "$out.stderr" >&2
    fail "fuserc compile $(name_of "$graph") (cache $cache, options: $*) failed"
  fi
}

# build NAME [OPTION...]: every graph into $tmp/NAME/out/<graph>.fpkg, local cache $tmp/NAME/cache.
build() {
  local name=$1 g
  shift
  for g in "${graphs[@]}"; do
    compile_one "$g" "$tmp/$name/out/$(name_of "$g").fpkg" "$tmp/$name/cache" "$@"
  done
}

# same_as_a NAME [GRAPH...]: NAME's packages are byte-identical to A's (all graphs by default).
same_as_a() {
  local name=$1 g
  shift
  local list=("$@")
  [ "${#list[@]}" -gt 0 ] || list=("${graphs[@]}")
  for g in "${list[@]}"; do
    local n
    n=$(name_of "$g")
    cmp -s "$tmp/A/out/$n.fpkg" "$tmp/$name/out/$n.fpkg" ||
      fail "build $name: $n.fpkg differs from build A's"
  done
}

# warnings FILE: how many lines of FILE start with the remote cache's warning.
warnings() { grep -c '^fuserc: warning: remote cache' "$1" || true; }

# no_warnings NAME: no compile of build NAME warned about the remote cache.
no_warnings() {
  local f
  for f in "$tmp/$1"/out/*.stderr; do
    [ "$(warnings "$f")" = 0 ] || fail "build $1 warned about the remote cache: $(cat "$f")"
  done
}

# stats NAME: `fuserc cache stats` of build NAME's cache.
stats() { "$fuserc" cache stats --cache-dir "$tmp/$1/cache"; }

# stat_field NAME LINE FIELD: the number after "FIELD " on the stats line of build NAME that
# matches the regular expression LINE: '^ *hits ' (hits, misses, stores, evictions, damaged
# entries discarded) or '^remote:' (fetched, not found, damaged, errors, stored).
stat_field() {
  local out line value
  out=$(stats "$1") || fail "fuserc cache stats --cache-dir $tmp/$1/cache failed: $out"
  line=$(grep -E "$2" <<<"$out" | head -n 1 || true)
  [ -n "$line" ] || fail "build $1: no line matching '$2' in the cache stats:"$'\n'"$out"
  value=$(sed -nE "s/.*[ :,]$3 ([0-9]+).*/\1/p" <<<" $line")
  [ -n "$value" ] || fail "build $1: no '$3 N' in the stats line: $line"
  echo "$value"
}
local_stat() { stat_field "$1" '^ *hits ' "$2"; }
remote_stat() { stat_field "$1" '^remote:' "$2"; }

# expect WHAT ACTUAL OP EXPECTED (OP: -eq, -gt, -ge, ...), with the stats of the build in
# the failure message.
expect() {
  local what=$1 actual=$2 op=$3 expected=$4
  local name=${what%%:*}
  test "$actual" "$op" "$expected" ||
    fail "$what is $actual, expected $op $expected; stats:"$'\n'"$(stats "$name" 2>&1 || true)"
}

access_lines() { wc -l < "$tmp/access.log"; }

# The entries under a URL prefix on the server.
entries() { find "$tmp/dav/$1" -type f 2>/dev/null | LC_ALL=C sort; }

# ---- a. Build A: cold, fills the local cache and the server ----
echo "== a. build A: cold local cache, empty server"
build A --cache-url "$server/fuserc"
no_warnings A
a_stores=$(local_stat A stores)
expect "A: NVRTC compilations (stores)" "$a_stores" -gt 0
expect "A: remote stored" "$(remote_stat A stored)" -eq "$a_stores"
expect "A: remote errors" "$(remote_stat A errors)" -eq 0
mapfile -t a_entries < <(entries fuserc)
n_entries=${#a_entries[@]}
[ "$n_entries" = "$a_stores" ] ||
  fail "the server holds $n_entries entries under fuserc/, expected $a_stores (A's stores)"
for e in "${a_entries[@]}"; do
  rel=${e#"$tmp/dav/fuserc/"}
  [[ $rel =~ ^ac/([0-9a-f]{32})([0-9a-f]{32})$ ]] ||
    fail "an entry on the server is not ac/<64 hex digits>: fuserc/$rel"
  [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
    fail "an entry's name is not its 32-digit key written twice: fuserc/$rel"
  [ -s "$e" ] || fail "an empty entry on the server: fuserc/$rel"
done
if grep -q 'auth="Bearer' "$tmp/access.log"; then
  fail "an Authorization header was sent without FUSERC_CACHE_TOKEN"
fi
echo "A: $a_stores NVRTC compilations, $n_entries entries on the server"

# ---- b. Build B: an empty local cache, everything from the server ----
echo "== b. build B: empty local cache, warm server"
build B --cache-url "$server/fuserc"
no_warnings B
same_as_a B
expect "B: NVRTC compilations (stores)" "$(local_stat B stores)" -eq 0
expect "B: remote fetched" "$(remote_stat B fetched)" -eq "$n_entries"
expect "B: remote not found" "$(remote_stat B 'not found')" -eq 0
expect "B: remote damaged" "$(remote_stat B damaged)" -eq 0
expect "B: remote stored" "$(remote_stat B stored)" -eq 0
# B's local cache now holds everything: a rebuild never asks the server.
before=$(access_lines)
for g in "${graphs[@]}"; do
  compile_one "$g" "$tmp/B/out2/$(name_of "$g").fpkg" "$tmp/B/cache" --cache-url "$server/fuserc"
  cmp -s "$tmp/A/out/$(name_of "$g").fpkg" "$tmp/B/out2/$(name_of "$g").fpkg" ||
    fail "build B, warm local cache: $(name_of "$g").fpkg differs from build A's"
done
after=$(access_lines)
[ "$after" = "$before" ] ||
  fail "local hits asked the server: $((after - before)) requests:"$'\n'"$(tail -n $((after - before)) "$tmp/access.log")"
expect "B: NVRTC compilations (stores) after a warm rebuild" "$(local_stat B stores)" -eq 0

# ---- c. Read-only: fetches, never PUTs ----
echo "== c. build C: --cache-read-only, empty prefix ro/ (the first three graphs)"
graphs=("${small_graphs[@]}")
build C --cache-url "$server/ro" --cache-read-only
no_warnings C
same_as_a C
expect "C: NVRTC compilations (stores)" "$(local_stat C stores)" -gt 0
expect "C: remote not found" "$(remote_stat C 'not found')" -gt 0
expect "C: remote stored" "$(remote_stat C stored)" -eq 0
[ -z "$(entries ro)" ] || fail "--cache-read-only stored entries: $(entries ro)"
if grep -q '"PUT /ro/' "$tmp/access.log"; then
  fail "--cache-read-only sent a PUT: $(grep '"PUT /ro/' "$tmp/access.log" | head -n 3)"
fi

graphs=("${all_graphs[@]}")

# ---- d. The token: sent as a bearer token, never printed ----
echo "== d. FUSERC_CACHE_TOKEN"
token=sekrit-token-123
mkdir -p "$tmp/T"
before=$(access_lines)
if ! FUSERC_CACHE_TOKEN=$token "$fuserc" compile "${graphs[0]}" -o "$tmp/T/p.fpkg" \
    --cache-dir "$tmp/T/cache" --cache-url "$server/fuserc" --arch sm_80 -j 2 --quiet \
    > "$tmp/T/output.txt" 2>&1; then
  cat "$tmp/T/output.txt" >&2
  fail "compile with FUSERC_CACHE_TOKEN failed"
fi
FUSERC_CACHE_TOKEN=$token stats T >> "$tmp/T/output.txt" 2>&1 || fail "cache stats failed"
! grep -qF "$token" "$tmp/T/output.txt" || fail "the token was printed: $(cat "$tmp/T/output.txt")"
! grep -rqF "$token" "$tmp/T/cache" || fail "the token was written into the local cache"
requests=$(tail -n +$((before + 1)) "$tmp/access.log")
[ -n "$requests" ] || fail "the compile with a token sent no request"
if grep -vqF "auth=\"Bearer $token\"" <<<"$requests"; then
  fail "requests without 'Authorization: Bearer <token>':"$'\n'"$(grep -vF "Bearer $token" <<<"$requests" | head -n 3)"
fi
cmp -s "$tmp/A/out/$(name_of "${graphs[0]}").fpkg" "$tmp/T/p.fpkg" ||
  fail "the package compiled with a token differs from build A's"

# ---- e. Altered entries on the server ----
echo "== e. build D: one entry with a flipped byte, one truncated"
[ "$n_entries" -ge 2 ] || fail "need at least two entries on the server to alter"
flipped=${a_entries[0]}
truncated=${a_entries[$((n_entries - 1))]}
size=$(stat -c %s "$flipped")
[ "$size" -gt 32 ] || fail "an entry of only $size bytes"
# Flip every bit of one byte among the last 16.
offset=$((size - 1 - RANDOM % 16))
byte=$(od -An -tu1 -j "$offset" -N 1 "$flipped" | tr -d ' ')
# shellcheck disable=SC2059  # the format is the octal escape of the new byte
printf "\\$(printf '%03o' $((byte ^ 0xff)))" |
  dd of="$flipped" bs=1 seek="$offset" conv=notrunc status=none
[ "$(stat -c %s "$flipped")" = "$size" ] || fail "flipping a byte changed the entry's size"
truncate -s $(($(stat -c %s "$truncated") / 2)) "$truncated"
build D --cache-url "$server/fuserc"
no_warnings D
same_as_a D
expect "D: remote damaged" "$(remote_stat D damaged)" -eq 2
expect "D: NVRTC compilations (stores)" "$(local_stat D stores)" -eq 2
expect "D: remote stored (the damaged entries PUT again)" "$(remote_stat D stored)" -eq 2
expect "D: remote not found" "$(remote_stat D 'not found')" -eq 0
expect "D: remote fetched" "$(remote_stat D fetched)" -ge $((n_entries - 2))
# The server's entries are whole again: another empty cache (the URL from the environment)
# compiles nothing and finds nothing damaged.
echo "== e. build E: empty local cache, FUSERC_CACHE_URL, repaired server"
FUSERC_CACHE_URL=$server/fuserc build E
no_warnings E
same_as_a E
expect "E: NVRTC compilations (stores)" "$(local_stat E stores)" -eq 0
expect "E: remote damaged" "$(remote_stat E damaged)" -eq 0
expect "E: remote fetched" "$(remote_stat E fetched)" -eq "$n_entries"
[ "$(entries fuserc | wc -l)" = "$n_entries" ] || fail "the number of entries on the server changed"

# ---- f. A server too slow to answer: --cache-timeout ----
# Both architectures of the second graph: more keys than one batch of 8 requests, so that a
# server that never answers must cost a bounded time whatever the number of keys. The bound is
# relative to the same compile without a remote cache (NVRTC dominates, ASan or not).
if [ -n "$echo_module" ]; then
  echo "== f. build S: a server that answers after 10 s, --cache-timeout 1, more than 8 keys"
  g=${graphs[1]}
  mkdir -p "$tmp/S/out"
  start=$(date +%s%N)
  "$fuserc" compile "$g" -o "$tmp/S/out/base.fpkg" --arch sm_80,sm_90 -j 2 --quiet \
    --cache-dir "$tmp/S/base-cache" > /dev/null 2>&1 || fail "the baseline compile failed"
  base_ms=$((($(date +%s%N) - start) / 1000000))
  out=$tmp/S/out/slow.fpkg
  start=$(date +%s%N)
  "$fuserc" compile "$g" -o "$out" --arch sm_80,sm_90 -j 2 --quiet --cache-dir "$tmp/S/cache" \
    --cache-url "$server/slow" --cache-timeout 1 > "$out.stdout" 2> "$out.stderr" ||
    fail "a slow server failed the compile:"$'\n'"$(cat "$out.stderr")"
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  cmp -s "$tmp/S/out/base.fpkg" "$out" || fail "a slow server changed the package"
  [ "$(warnings "$out.stderr")" = 1 ] ||
    fail "a slow server: expected one warning line, got:"$'\n'"$(cat "$out.stderr")"
  # The fetch gives up after one failed batch and one failed retry: at most 2 requests count
  # as errors, where waiting for each key would count one or two per key (more than 8 here).
  # That is the check; the time bound is only a sanity bound, loose because CTest runs other
  # tests beside this one (a compile that waited for the server's 10 s answers would exceed it).
  expect "S: remote errors" "$(remote_stat S errors)" -ge 1
  expect "S: remote errors" "$(remote_stat S errors)" -le 2
  limit_ms=$((2 * base_ms + 12000))
  [ "$elapsed_ms" -lt "$limit_ms" ] ||
    fail "a slow server with --cache-timeout 1: the compile took $elapsed_ms ms (expected < $limit_ms: the same compile without the server took $base_ms ms)"
  expect "S: remote fetched" "$(remote_stat S fetched)" -eq 0
  expect "S: NVRTC compilations (stores)" "$(local_stat S stores)" -gt 8
  echo "S: compiled in $elapsed_ms ms (without the server $base_ms ms): $(cat "$out.stderr")"
else
  echo "== f. SKIPPED (slow server): nginx's echo module (ngx_http_echo_module.so, Debian's" \
       "libnginx-mod-http-echo) is not installed"
fi

# ---- g. The server goes away in the middle of one compile, then of a build ----
# One compile of both architectures of the second graph (over ten NVRTC compilations): once
# nginx has logged its GETs (the compile fetched, found nothing and is in NVRTC), nginx is
# stopped; the PUTs at the end then fail: one warning, the compile succeeds, same package.
echo "== h. build W: a server that makes no folders on PUT (409): MKCOL, then again"
# Apache's mod_dav answers such a PUT with 409 (nginx with 500, so a small server of ours).
mkdir -p "$tmp/bare"
python3 "$script_dir/folderless_dav.py" "$tmp/bare" "$tmp/bare.port" 2> "$tmp/bare.log" &
dav_pid=$!
for _ in $(seq 100); do
  [ -s "$tmp/bare.port" ] && break
  sleep 0.1
done
[ -s "$tmp/bare.port" ] || fail "folderless_dav.py did not start: $(cat "$tmp/bare.log")"
bare=http://127.0.0.1:$(cat "$tmp/bare.port")
first=${small_graphs[0]}
compile_one "$first" "$tmp/W/out/$(name_of "$first").fpkg" "$tmp/W/cache" --cache-url "$bare/fuserc"
[ "$(warnings "$tmp/W/out/$(name_of "$first").fpkg.stderr")" = 0 ] ||
  fail "build W warned: $(cat "$tmp/W/out/$(name_of "$first").fpkg.stderr")"
w_stores=$(local_stat W stores)
expect "W: NVRTC compilations (stores)" "$w_stores" -gt 0
expect "W: remote stored" "$(remote_stat W stored)" -eq "$w_stores"
w_entries=$(find "$tmp/bare/fuserc/ac" -type f 2>/dev/null | wc -l)
[ "$w_entries" = "$w_stores" ] ||
  fail "the folderless server holds $w_entries entries, expected $w_stores"
grep -q '^MKCOL /fuserc/ac/' "$tmp/bare.log" || fail "no MKCOL of /fuserc/ac/: $(cat "$tmp/bare.log")"
grep -q '^PUT ' "$tmp/bare.log" || fail "no PUT reached the folderless server"
kill "$dav_pid" 2>/dev/null || true
wait "$dav_pid" 2>/dev/null || true
dav_pid=""
echo "W: $w_stores entries stored after 409 and MKCOL"

echo "== g. build M: the server stops while one compile runs"
g=${graphs[1]}
mkdir -p "$tmp/M/out"
"$fuserc" compile "$g" -o "$tmp/M/out/base.fpkg" --arch sm_80,sm_90 -j 2 --quiet \
  --cache-dir "$tmp/M/base-cache" > /dev/null 2>&1 || fail "build M: the baseline compile failed"
gets_before=$(grep -c '"GET /mid/' "$tmp/access.log" || true)
"$fuserc" compile "$g" -o "$tmp/M/out/mid.fpkg" --arch sm_80,sm_90 -j 2 --quiet \
  --cache-dir "$tmp/M/cache" --cache-url "$server/mid" \
  > "$tmp/M/out/mid.stdout" 2> "$tmp/M/out/mid.stderr" &
compile_pid=$!
for _ in $(seq 200); do
  [ "$(grep -c '"GET /mid/' "$tmp/access.log" || true)" -gt "$gets_before" ] && break
  sleep 0.05
done
[ "$(grep -c '"GET /mid/' "$tmp/access.log" || true)" -gt "$gets_before" ] ||
  fail "build M: the compile never asked the server"
stop_nginx
wait "$compile_pid" || fail "build M: the server stopping mid-compile failed it:"$'\n'"$(cat "$tmp/M/out/mid.stderr")"
cmp -s "$tmp/M/out/base.fpkg" "$tmp/M/out/mid.fpkg" || fail "build M: the package differs"
[ "$(warnings "$tmp/M/out/mid.stderr")" = 1 ] ||
  fail "build M: expected one warning line, got:"$'\n'"$(cat "$tmp/M/out/mid.stderr")"
expect "M: remote stored" "$(remote_stat M stored)" -eq 0
expect "M: remote errors" "$(remote_stat M errors)" -ge 1
echo "M: $(cat "$tmp/M/out/mid.stderr")"
# The rest of this step needs the server again; then it stops between the compiles of a build.
start_nginx "$port" || fail "nginx would not start again on port $port"

# Between the compiles of a build:
echo "== g. build F: the server stops after the first graph (the first three graphs)"
graphs=("${small_graphs[@]}")
first=${graphs[0]}
compile_one "$first" "$tmp/F/out/$(name_of "$first").fpkg" "$tmp/F/cache" \
  --cache-url "$server/down"
[ "$(warnings "$tmp/F/out/$(name_of "$first").fpkg.stderr")" = 0 ] ||
  fail "build F: a warning while the server was up"
expect "F: remote stored" "$(remote_stat F stored)" -gt 0
stop_nginx
for _ in $(seq 50); do
  [ "$(http_code "$server/")" = 000 ] && break
  sleep 0.1
done
[ "$(http_code "$server/")" = 000 ] || fail "the server still answers after it was stopped"
# Each remaining graph with its own empty local cache ($tmp/F/<graph>/cache), so that each
# compile needs the server whatever kernels the graphs share.
for g in "${graphs[@]:1}"; do
  n=$(name_of "$g")
  compile_one "$g" "$tmp/F/out/$n.fpkg" "$tmp/F/$n/cache" --cache-url "$server/down"
  [ "$(warnings "$tmp/F/out/$n.fpkg.stderr")" = 1 ] ||
    fail "build F, $n with the server down: expected one warning line, got:"$'\n'"$(cat "$tmp/F/out/$n.fpkg.stderr")"
  expect "F/$n: remote errors" "$(remote_stat "F/$n" errors)" -ge 1
  expect "F/$n: remote stored" "$(remote_stat "F/$n" stored)" -eq 0
done
same_as_a F
echo "F: $(head -n 1 "$tmp/F/out/$(name_of "${graphs[1]}").fpkg.stderr")"

echo "remote cache test: all checks passed"
