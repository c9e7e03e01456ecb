#!/usr/bin/env bash
# YCSB A and C at 8 clients on one member (cairnd's default one-member set,
# w: 1, j: true) beside a 3-member set (w: "majority", reads from the
# primary), all four processes on this machine, the two deployments run
# alternately (one, three, one, three, ...) so that both see the same
# machine load. Prints the ycsb tables of each run; results in $B.
#
# Usage: bench/ycsb-replset.sh [REPS]   (default 2; needs mongosh to initiate)
# Environment: B (work directory, default /tmp/cairn-ycsb-replset),
# PORT (base port, default 37600), RECORDS (20000), OPS (20000 per run).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-2}
B=${B:-/tmp/cairn-ycsb-replset}
PORT=${PORT:-37600}
RECORDS=${RECORDS:-20000}
OPS=${OPS:-20000}
rm -rf "$B"
mkdir -p "$B"
go build -o "$B/cairnd" ./cmd/cairnd
(cd bench && go build -o "$B/ycsb" ./cmd/ycsb)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
"$B/cairnd" --bind_ip 127.0.0.1 --port "$PORT" --dbpath "$B/one" >"$B/one.log" 2>&1 &
pids+=($!)
for i in 1 2 3; do
	mkdir -p "$B/m$i"
	"$B/cairnd" --replSet rs0 --bind_ip 127.0.0.1 --port $((PORT + i)) --dbpath "$B/m$i" >"$B/m$i.log" 2>&1 &
	pids+=($!)
done
first="mongodb://127.0.0.1:$((PORT + 1))/?directConnection=true"
for _ in $(seq 1 40); do
	mongosh --quiet "$first" --eval 'db.adminCommand({ping: 1}).ok' >/dev/null 2>&1 && break
	sleep 0.5
done
mongosh --quiet "$first" --eval "db.adminCommand({replSetInitiate: {_id: 'rs0', members: [
  {_id: 0, host: '127.0.0.1:$((PORT + 1))'}, {_id: 1, host: '127.0.0.1:$((PORT + 2))'}, {_id: 2, host: '127.0.0.1:$((PORT + 3))'}]}}).ok" >/dev/null
for _ in $(seq 1 60); do
	s=$(mongosh --quiet "$first" --eval 'rs.status().members.map(m => m.stateStr).sort().join(",")' 2>/dev/null || true)
	[ "$s" = "PRIMARY,SECONDARY,SECONDARY" ] && break
	sleep 0.5
done
one="mongodb://127.0.0.1:$PORT/?directConnection=true&w=1&journal=true"
three="mongodb://127.0.0.1:$((PORT + 1)),127.0.0.1:$((PORT + 2)),127.0.0.1:$((PORT + 3))/?replicaSet=rs0&w=majority"
"$B/ycsb" -uri "$one" -recordcount "$RECORDS" -loadonly -loadthreads 8 >"$B/load-one.txt" 2>&1
"$B/ycsb" -uri "$three" -recordcount "$RECORDS" -loadonly -loadthreads 8 >"$B/load-three.txt" 2>&1
for rep in $(seq 1 "$reps"); do
	for which in one three; do
		uri=$one
		[ "$which" = three ] && uri=$three
		"$B/ycsb" -uri "$uri" -recordcount "$RECORDS" -skipload -workloads a,c -threads 8 -operationcount "$OPS" -maxtime 30s >"$B/run-$which-$rep.txt" 2>&1
		echo "== $which, repetition $rep"
		grep -E '^\| (a|c) ' "$B/run-$which-$rep.txt"
	done
done
mongosh --quiet "$first" --eval 'const r = db.serverStatus().repl.raft; print("commit latency on the primary: " + r.commitLatency.count + " batches, mean " + Math.round(r.commitLatency.totalMicros / r.commitLatency.count) + " µs")'
