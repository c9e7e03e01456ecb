#!/usr/bin/env bash
# Runs the YCSB matrix against a fresh cairnd: builds cairnd and
# bench/cmd/ycsb, starts cairnd on a free loopback port with a temporary
# data directory, loads the records, then runs the ping ceiling and
# workloads A, B, C, F, D, E at 1, 8, 40 and 80 client goroutines (each
# with its own connection), and writes DIR/NAME.{json,md} and
# DIR/NAME-{throughput,p99}.png.
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
#   -gomaxprocs N run cairnd with GOMAXPROCS=N
#   -cpuprofile F write cairnd's CPU profile to F (cairnd --cpuprofile)
#   -repeat N     run the workload list N times at each client count,
#                 interleaved; figures come from the run of median throughput
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
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -big) records=1000000; shift ;;
    -out) out=$2; shift 2 ;;
    -name) name=$2; shift 2 ;;
    -gomaxprocs) gomaxprocs=$2; shift 2 ;;
    -threads) threads=$2; shift 2 ;;
    -workloads) workloads=$2; shift 2 ;;
    -ops) ops=$2; shift 2 ;;
    -cpuprofile) cpuprofile=$2; shift 2 ;;
    -repeat) repeat=$2; shift 2 ;;
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

go build -o "$tmp/cairnd" ./cmd/cairnd
(cd bench && go build -o "$tmp/ycsb" ./cmd/ycsb)

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
echo "results: $out/$name.md"
