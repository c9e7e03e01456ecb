#!/usr/bin/env bash
# Interleaved A/B of go-ycsb workloads against two cairnd binaries, each
# serving its own data directory loaded the same way: both servers are up
# throughout, and each round runs every workload on both, the order
# alternating from round to round. go-ycsb must have been installed by
# bench/ycsb.sh (its cache path below).
#
#   BASE=/tmp/cairnd_base NEW=/tmp/cairnd_new RECS=20000 OPS=20000 ROUNDS=5 \
#     THREADS=40 WLS="c e" OUT=/tmp/ab bench/goycsb-ab.sh
set -euo pipefail
G=${XDG_CACHE_HOME:-$HOME/.cache}/cairn/go-ycsb-v1.0.3
W=$(cd /tmp && GOFLAGS=-mod=mod go mod download -json github.com/pingcap/go-ycsb@v1.0.3 | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')/workloads
declare -A bin=([base]=${BASE:?set BASE to the base cairnd} [new]=${NEW:?set NEW to the new cairnd})
recs=${RECS:-20000}; ops=${OPS:-20000}; rounds=${ROUNDS:-3}; threads=${THREADS:-40}; wls=${WLS:-c e}
out=${OUT:-/tmp/ab}
mkdir -p $out
pids=()
for v in base new; do
  rm -rf /tmp/ab-$v && mkdir -p /tmp/ab-$v/db
  port=$((27900 + ${#pids[@]}))
  "${bin[$v]}" --dbpath /tmp/ab-$v/db --port $port --bind_ip 127.0.0.1 --logpath /tmp/ab-$v/log &
  pids+=($!)
done
trap 'kill ${pids[@]} 2>/dev/null; wait 2>/dev/null; rm -rf /tmp/ab-base /tmp/ab-new' EXIT
sleep 2
url() { echo "mongodb.url=mongodb://127.0.0.1:$1/ycsb?directConnection=true"; }
$G load mongodb -P $W/workloada -p $(url 27900) -p recordcount=$recs -p threadcount=8 > $out/load-base.txt 2>&1
$G load mongodb -P $W/workloada -p $(url 27901) -p recordcount=$recs -p threadcount=8 > $out/load-new.txt 2>&1
for r in $(seq 1 $rounds); do
  for w in $wls; do
    order="base new"; [ $((r % 2)) = 0 ] && order="new base"
    for v in $order; do
      port=27900; [ $v = new ] && port=27901
      n=$ops; [ $w = e ] && n=$((ops / 3))
      $G run mongodb -P $W/workload$w -p $(url $port) -p recordcount=$recs -p operationcount=$n -p threadcount=$threads > $out/$w-$v-$r.txt 2>&1
      echo "round $r $w $v: $(grep '^TOTAL' $out/$w-$v-$r.txt | tail -1 | sed 's/, Avg.*50th/ 50th/;s/, 90th.*99th/ 99th/;s/, 99.9th.*//')"
    done
  done
done
