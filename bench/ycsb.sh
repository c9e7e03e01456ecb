#!/usr/bin/env bash
# Runs the YCSB matrix against a fresh cairnd: builds cairnd and
# bench/cmd/ycsb, starts cairnd on a free loopback port with a temporary
# data directory, loads the records, then runs the ping ceiling and
# workloads A, B, C, F, D, E at 1, 8, 40 and 80 client goroutines (each
# with its own connection), and writes DIR/NAME.{json,md} and
# DIR/NAME-{throughput,p99}.png.
#
# Then, against the same server, go-ycsb v1.0.3 (YCSB's Go port, its
# mongodb binding; built here from its module source, see install_goycsb)
# loads its own collection (ycsb.usertable_goycsb) and runs workloads A, B,
# C, F, D, E at 1, 8 and 40 clients, and cmd/roundtrip measures the echo
# floor (a minimal Go client and echo server with the message sizes of
# ping) beside the raw and the driver's ping, and writes
# DIR/NAME-roundtrip.{md,json,png}: every go-ycsb workload as a share of
# the driver's ping ceiling at the same client count, and ping as a share
# of the floor.
#
# Operation counts per run (bounded so that the 100,000-record matrix
# finishes in about 10 minutes on a 2-core machine): 100,000 for A, B, C,
# D, F and ping, 20,000 for E (scans of up to 100 records); every run also
# stops after 90 s.
#
# Usage: bench/ycsb.sh [-big] [-out DIR] [-name NAME] [-gomaxprocs N] [-repeat N]
#                      [-threads 1,8,40,80] [-workloads ping,a,...] [-ops N]
#                      [-- more ycsb flags]
#   -big          1,000,000 records instead of 100,000 (load takes minutes)
#   -records N    N records
#   -gomaxprocs N run cairnd with GOMAXPROCS=N
#   -cpuprofile F write cairnd's CPU profile to F (cairnd --cpuprofile)
#   -repeat N     run the workload list N times at each client count,
#                 interleaved; figures come from the run of median throughput
#   -cairnd BIN   serve with this cairnd binary instead of building one
#   -goycsb-threads 1,8,40   go-ycsb's client counts ("" skips go-ycsb)
#   -goycsb-ops N go-ycsb operations per run (default 30,000; E 10,000)
#   -goycsb-workloads a,b,c,f,d,e
set -euo pipefail
cd "$(dirname "$0")/.."

records=100000
out=bench/results
name=""
gomaxprocs=""
threads=1,8,40,80
workloads=ping,a,b,c,f,d,e
ops="100000"
overrides="e=20000"
cpuprofile=""
repeat=1
cairnd=""
gothreads=1,8,40
goops=30000
goworkloads=a,b,c,f,d,e
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -big) records=1000000; shift ;;
    -records) records=$2; shift 2 ;;
    -out) out=$2; shift 2 ;;
    -name) name=$2; shift 2 ;;
    -gomaxprocs) gomaxprocs=$2; shift 2 ;;
    -threads) threads=$2; shift 2 ;;
    -workloads) workloads=$2; shift 2 ;;
    -ops) ops=$2; shift 2 ;;
    -cpuprofile) cpuprofile=$2; shift 2 ;;
    -repeat) repeat=$2; shift 2 ;;
    -cairnd) cairnd=$(realpath "$2"); shift 2 ;;
    -goycsb-threads) gothreads=$2; shift 2 ;;
    -goycsb-ops) goops=$2; shift 2 ;;
    -goycsb-workloads) goworkloads=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "ycsb.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$name" ]; then
  name=ycsb-$((records / 1000))k
  [ -n "$gomaxprocs" ] && name=$name-gomaxprocs$gomaxprocs
fi

tmp=$(mktemp -d /tmp/ycsb.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# install_goycsb builds go-ycsb v1.0.3 once into the user's cache. Its
# go.mod has a replace directive, so `go install module@version` refuses
# it; it is built instead as the main module, from the source the Go
# module proxy serves (go mod download), with its own go.sum.
install_goycsb() {
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/cairn
  goycsb=$cache/go-ycsb-v1.0.3
  [ -x "$goycsb" ] && return 0
  local dir
  dir=$(goycsb_dir)
  [ -n "$dir" ] || { echo "ycsb.sh: go mod download of go-ycsb failed" >&2; return 1; }
  mkdir -p "$cache"
  rm -rf "$tmp/go-ycsb-src"
  cp -r "$dir" "$tmp/go-ycsb-src"
  chmod -R u+w "$tmp/go-ycsb-src"
  echo "building go-ycsb v1.0.3 (a few minutes the first time)"
  (cd "$tmp/go-ycsb-src" && go build -o "$goycsb.tmp" ./cmd/go-ycsb) && mv "$goycsb.tmp" "$goycsb"
}

# goycsb_dir prints where the Go module cache holds go-ycsb's source.
goycsb_dir() {
  (cd "$tmp" && GOFLAGS=-mod=mod go mod download -json github.com/pingcap/go-ycsb@v1.0.3) | sed -n 's/.*"Dir": "\(.*\)",*/\1/p'
}

if [ -n "$cairnd" ]; then
  cp "$cairnd" "$tmp/cairnd"
else
  go build -o "$tmp/cairnd" ./cmd/cairnd
fi
(cd bench && go build -o "$tmp/ycsb" ./cmd/ycsb && go build -o "$tmp/roundtrip" ./cmd/roundtrip)
if [ -n "$gothreads" ]; then
  install_goycsb
  goycsb_workloads=$(goycsb_dir)/workloads
fi

port=$((20000 + RANDOM % 20000))
srvflags=(--dbpath "$tmp/db" --port "$port" --bind_ip 127.0.0.1 --logpath "$tmp/cairnd.log")
[ -n "$cpuprofile" ] && srvflags+=(--cpuprofile "$cpuprofile")
mkdir -p "$tmp/db"
if [ -n "$gomaxprocs" ]; then
  GOMAXPROCS=$gomaxprocs "$tmp/cairnd" "${srvflags[@]}" &
else
  "$tmp/cairnd" "${srvflags[@]}" &
fi
pid=$!

label="GOMAXPROCS=${gomaxprocs:-default ($(nproc))}"
"$tmp/ycsb" -uri "mongodb://127.0.0.1:$port/?directConnection=true" -pid "$pid" \
  -recordcount "$records" -operationcount "$ops" -ops "$overrides" -maxtime 90s \
  -threads "$threads" -workloads "$workloads" -repeat "$repeat" -label "$label" \
  -out "$out" -name "$name" "${extra[@]}"

if [ -n "$gothreads" ]; then
  gout=$tmp/goycsb
  mkdir -p "$gout"
  url="mongodb://127.0.0.1:$port/ycsb?directConnection=true"
  gprops=(-p "mongodb.url=$url" -p table=usertable_goycsb -p recordcount=$records -p maxexecutiontime=90)
  echo "go-ycsb: loading $records records with 8 clients"
  "$goycsb" load mongodb -P "$goycsb_workloads/workloada" "${gprops[@]}" -p threadcount=8 > "$gout/load.log" 2>&1 \
    || { tail -20 "$gout/load.log" >&2; exit 1; }
  IFS=, read -ra gts <<< "$gothreads"
  IFS=, read -ra gws <<< "$goworkloads"
  for t in "${gts[@]}"; do
    for w in "${gws[@]}"; do
      n=$goops
      [ "$w" = e ] && n=$((goops / 3))
      "$goycsb" run mongodb -P "$goycsb_workloads/workload$w" "${gprops[@]}" -p threadcount="$t" -p operationcount="$n" \
        > "$gout/$w-$t.txt" 2>&1 || { tail -20 "$gout/$w-$t.txt" >&2; exit 1; }
      echo "go-ycsb $w $t clients: $(grep '^TOTAL' "$gout/$w-$t.txt" | tail -1)"
    done
  done
  mkdir -p "$out/$name-goycsb"
  cp "$gout"/*.txt "$out/$name-goycsb/"
fi
"$tmp/roundtrip" run -mongo "127.0.0.1:$port" -threads "$threads" -ycsb "$out/$name.json" \
  ${gothreads:+-goycsb "$tmp/goycsb"} -out "$out" -name "$name-roundtrip"
echo "results: $out/$name.md, $out/$name-roundtrip.md"
