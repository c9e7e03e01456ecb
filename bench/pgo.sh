#!/usr/bin/env bash
# Regenerates cmd/cairnd/default.pgo, the profile every `go build` of
# cairnd uses for profile-guided optimisation: builds cairnd without PGO,
# runs a representative mix against it with --cpuprofile, one server per
# part, and merges the profiles:
#
#   1. YCSB load of 20,000 records with j:true inserts (8 clients);
#   2. YCSB workloads A, B, C, F, D and E on them, 8 and 40 clients, 40,000
#      operations each;
#   3. bench/cmd/indexbench with 100,000 documents (insert phase and every
#      index build);
#   4. ClickBench over 1,000,000 rows: the import, its 15 index builds and
#      two runs of each of the 43 queries.
#
# Usage: bench/pgo.sh [-out FILE]   (default cmd/cairnd/default.pgo)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=cmd/cairnd/default.pgo
while [ $# -gt 0 ]; do
  case "$1" in
    -out) out=$2; shift 2 ;;
    *) echo "pgo.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

tmp=$(mktemp -d /tmp/pgo.XXXXXX)
pid=""
stop_server() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap 'stop_server; rm -rf "$tmp"' EXIT

go build -pgo=off -o "$tmp/cairnd" ./cmd/cairnd
(cd bench && go build -o "$tmp/ycsb" ./cmd/ycsb && go build -o "$tmp/indexbench" ./cmd/indexbench)

# start_server NAME: cairnd with a fresh data directory, profiling into
# $tmp/NAME.pprof; sets pid and uri.
start_server() {
  port=$((20000 + RANDOM % 20000))
  mkdir -p "$tmp/db-$1"
  "$tmp/cairnd" --dbpath "$tmp/db-$1" --port "$port" --logpath "$tmp/$1.log" --cpuprofile "$tmp/$1.pprof" &
  pid=$!
  uri="mongodb://127.0.0.1:$port/?directConnection=true"
}

echo "== YCSB: j:true load, workloads A-F"
start_server ycsb
"$tmp/ycsb" -uri "$uri&journal=true" -recordcount 20000 -loadthreads 8 -loadonly -name pgo-load > "$tmp/ycsb-load.txt"
"$tmp/ycsb" -uri "$uri" -recordcount 20000 -skipload -workloads a,b,c,f,d,e -threads 8,40 -operationcount 40000 > "$tmp/ycsb-run.txt"
stop_server
profiles=("$tmp/ycsb.pprof")

echo "== index builds"
# indexbench and clickbench start their own server; a wrapper adds the
# profile flag (exec keeps the pid, so their signal reaches cairnd).
# profiled NAME: writes $tmp/cairnd-NAME, a cairnd profiling into NAME.pprof.
profiled() {
  printf '#!/bin/sh\nexec "%s" --cpuprofile "%s" "$@"\n' "$tmp/cairnd" "$tmp/$1.pprof" > "$tmp/cairnd-$1"
  chmod +x "$tmp/cairnd-$1"
}
profiled index
mkdir -p "$tmp/ib"
(cd bench && "$tmp/indexbench" -docs 100000 -cairnd "$tmp/cairnd-index" -dir "$tmp/ib" > "$tmp/index.txt")
profiles+=("$tmp/index.pprof")

if [ -d bench/cmd/clickbench ]; then
  echo "== ClickBench, 1,000,000 rows, two runs of each query"
  profiled click
  (cd bench && go run ./cmd/clickbench -rows 1000000 -runs 2 -check=false -cairnd "$tmp/cairnd-click" -out "$tmp" -name click > "$tmp/click.txt")
  profiles+=("$tmp/click.pprof")
else
  echo "== ClickBench: bench/cmd/clickbench does not exist yet; left out of the profile"
fi

go tool pprof -proto "${profiles[@]}" > "$tmp/merged.pgo"
mv "$tmp/merged.pgo" "$out"
ls -l "$out"
echo "regenerated $out from: ${profiles[*]##*/}"
