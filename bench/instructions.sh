#!/bin/bash
# Instructions a request costs the server, all its threads, counted by valgrind's callgrind: unlike CPU
# time, the count does not move with what else runs on a shared machine (though cache misses, which it
# does not see, do cost time). Starts the compiled CLI of <tree> (built: `node scripts/build.mjs` there)
# under callgrind with 25 private snippets of one 20-line file, or bare Fastify (bench/constant-server.ts)
# for `bare`; sends 2 × <requests> requests to warm the JIT up, zeroes the counters, sends <requests> more
# with autocannon (4 connections) and divides. Takes minutes: valgrind runs the server 20-50 times slower.
# Usage: bench/instructions.sh <tree> get|list|raw|file-raw|template|bare [requests, default 2000]
set -eu
TREE=$(realpath "$1")
KIND=$2
N=${3:-2000}
HERE=$(dirname "$(realpath "$0")")
WORK=$(mktemp -d /tmp/snippetd-instructions-XXXX)
TOKEN=bench-root-token-0123456789abcdef
VALGRIND=(valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file="$WORK/callgrind.%p")
if [ "$KIND" = bare ]; then
  "${VALGRIND[@]}" node --import tsx "$HERE/constant-server.ts" >"$WORK/out.log" 2>&1 &
else
  SNIPPETD_WORKERS=1 SNIPPETD_DATA_DIR="$WORK/data" SNIPPETD_INITIAL_ROOT_TOKEN=$TOKEN SNIPPETD_LOG_LEVEL=warn \
    "${VALGRIND[@]}" node --no-memory-reducer "$TREE/dist/cli.js" serve --port 0 >"$WORK/out.log" 2>&1 &
fi
PID=$!
trap 'kill $PID 2>/dev/null; sleep 2; kill -9 $PID 2>/dev/null; rm -rf "$WORK"' EXIT
URL=
for _ in $(seq 1200); do
  URL=$(grep -o 'listening on http://[^ ]*' "$WORK/out.log" | cut -d' ' -f3 || true)
  [ -n "$URL" ] && break
  sleep 0.5
done
[ -n "$URL" ] || { cat "$WORK/out.log"; exit 1; }
if [ "$KIND" = bare ]; then
  ROUTE=/constant
else
  JSON=(-H "private-token: $TOKEN" -H 'content-type: application/json')
  curl -sf -XPUT "${JSON[@]}" "$URL/api/v4/application/settings" \
    -d '{"raw_blob_request_limit":0,"raw_blob_request_limit_unauthenticated":0}' >/dev/null
  ID=
  for i in $(seq 25); do
    ID=$(curl -sf "${JSON[@]}" "$URL/api/v4/snippets" \
      -d "{\"title\":\"bench $i\",\"description\":\"a snippet\",\"visibility\":\"private\",\"files\":[{\"file_path\":\"a.rb\",\"content\":\"$(printf 'puts 1\\n%.0s' $(seq 20))\"}]}" |
      node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).id))')
  done
  case $KIND in
  get) ROUTE=/api/v4/snippets/$ID ;;
  list) ROUTE='/api/v4/snippets?per_page=20' ;;
  raw) ROUTE=/api/v4/snippets/$ID/raw ;;
  file-raw) ROUTE=/api/v4/snippets/$ID/files/main/a.rb/raw ;;
  template) ROUTE=/api/v4/templates/licenses/mit ;;
  *) echo "unknown kind $KIND" >&2; exit 2 ;;
  esac
fi
cd "$HERE/.."
npx autocannon -c 4 -a $((N * 2)) -H "PRIVATE-TOKEN=$TOKEN" "$URL$ROUTE" >/dev/null 2>&1
callgrind_control -z $PID >/dev/null 2>&1
npx autocannon -c 4 -a "$N" -H "PRIVATE-TOKEN=$TOKEN" "$URL$ROUTE" 2>&1 | grep -E 'requests in|non 2xx' || true
callgrind_control -d $PID >/dev/null 2>&1
sleep 1
TOTAL=$(cat "$WORK"/callgrind.$PID.* | awk '/^(summary|totals):/ { print $2; exit }')
echo "$KIND ($TREE): $((TOTAL / N)) instructions a request ($TOTAL over $N requests)"
