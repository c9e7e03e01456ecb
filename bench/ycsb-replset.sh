#!/usr/bin/env bash
# YCSB on one member (cairnd's default one-member set, w: 1, j: true)
# beside a 3-member set (w: "majority"), all processes on this machine,
# the deployments run alternately (one, three, one, three, ...) so that
# they see the same machine load. With CAIRND_BASE a second 3-member set
# runs that cairnd binary (a base build) and joins the rotation (three-base),
# for an A B A B comparison of two builds in one run; CAIRND_ALT, a third
# build, joins it the same way (three-alt, ports PORT+7..PORT+9). Each member gets
# --wiredTigerCacheSizeGB 0.5 and GOMEMLIMIT=1GiB. Prints the ycsb tables
# of each run and the Raft commit latency of each set's primary; results
# in $B.
#
# Usage: bench/ycsb-replset.sh [REPS]   (default 2)
# Environment: B (work directory, default /tmp/cairn-ycsb-replset),
# PORT (base port, default 37600), RECORDS (20000), OPS (20000 per run),
# MAXTIME (30s per run), WORKLOADS (a,c), THREADS (8; a list such as 8,40
# runs each count), CAIRND_BASE (a base cairnd binary; unset: none),
# CAIRND_ALT (another cairnd binary; unset: none),
# SECONDARY (1: also run the 3-member set with readPreference=secondary,
# reads spread over the two secondaries: three-sec).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-2}
B=${B:-/tmp/cairn-ycsb-replset}
PORT=${PORT:-37600}
RECORDS=${RECORDS:-20000}
OPS=${OPS:-20000}
MAXTIME=${MAXTIME:-30s}
WORKLOADS=${WORKLOADS:-a,c}
THREADS=${THREADS:-8}
rm -rf "$B"
mkdir -p "$B"
go build -o "$B/cairnd" ./cmd/cairnd
(cd bench && go build -o "$B/ycsb" ./cmd/ycsb)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
member() { # BIN DIR PORT [ARGS...]
	local bin=$1 dir=$2 port=$3
	shift 3
	mkdir -p "$dir"
	GOMEMLIMIT=1GiB "$bin" --bind_ip 127.0.0.1 --port "$port" --dbpath "$dir" --wiredTigerCacheSizeGB 0.5 "$@" >"$dir.log" 2>&1 &
	pids+=($!)
	dpids[${dir##*/}]="${dpids[${dir##*/}]:-} $!"
}
declare -A dpids
# cputicks NAME: the user+sys clock ticks the deployment's processes spent.
cputicks() {
	local t=0 p
	for p in ${dpids[$1]}; do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$t"
}
# startset NAME BIN FIRSTPORT: three members on FIRSTPORT..FIRSTPORT+2.
startset() {
	local name=$1 bin=$2 p=$3
	for i in 0 1 2; do
		member "$bin" "$B/$name-m$i" $((p + i)) --replSet rs0
		dpids[$name]="${dpids[$name]:-} ${dpids[$name-m$i]}"
	done
	"$B/ycsb" -initiate "rs0/127.0.0.1:$p,127.0.0.1:$((p + 1)),127.0.0.1:$((p + 2))"
}
member "$B/cairnd" "$B/one" "$PORT"
sets=(three)
startset three "$B/cairnd" $((PORT + 1))
if [ -n "${CAIRND_BASE:-}" ]; then
	sets+=(three-base)
	startset three-base "$CAIRND_BASE" $((PORT + 4))
fi
if [ -n "${CAIRND_ALT:-}" ]; then
	sets+=(three-alt)
	startset three-alt "$CAIRND_ALT" $((PORT + 7))
fi
uri() { # DEPLOYMENT
	case $1 in
	one) echo "mongodb://127.0.0.1:$PORT/?directConnection=true&w=1&journal=true" ;;
	three*)
		local p=$((PORT + 1))
		[ "$1" = three-base ] && p=$((PORT + 4))
		[ "$1" = three-alt ] && p=$((PORT + 7))
		local u="mongodb://127.0.0.1:$p,127.0.0.1:$((p + 1)),127.0.0.1:$((p + 2))/?replicaSet=rs0&w=majority"
		[ "$1" = three-sec ] && u="$u&readPreference=secondary"
		echo "$u"
		;;
	esac
}
rotation=(one three)
[ "${SECONDARY:-0}" = 1 ] && rotation+=(three-sec)
[ -n "${CAIRND_BASE:-}" ] && rotation+=(three-base)
[ -n "${CAIRND_ALT:-}" ] && rotation+=(three-alt)
for d in one "${sets[@]}"; do
	"$B/ycsb" -uri "$(uri "$d")" -recordcount "$RECORDS" -loadonly -loadthreads 8 >"$B/load-$d.txt" 2>&1
done
for rep in $(seq 1 "$reps"); do
	for n in ${THREADS//,/ }; do
		for which in "${rotation[@]}"; do
			d=${which%-sec}
			c0=$(cputicks "$d")
			w0=$(date +%s.%N)
			"$B/ycsb" -uri "$(uri "$which")" -recordcount "$RECORDS" -skipload -workloads "$WORKLOADS" -threads "$n" \
				-operationcount "$OPS" -maxtime "$MAXTIME" >"$B/run-$which-$n-$rep.txt" 2>&1
			c1=$(cputicks "$d")
			w1=$(date +%s.%N)
			echo "== $which, $n clients, repetition $rep: servers' CPU $(((c1 - c0) * 10)) ms (user+sys) in $(awk "BEGIN{printf \"%.1f\", $w1 - $w0}") s wall, load $(cut -d' ' -f1-3 /proc/loadavg)"
			grep -E '^\| [a-f] \(' "$B/run-$which-$n-$rep.txt"
		done
	done
done
for s in "${sets[@]}"; do
	p=$((PORT + 1))
	[ "$s" = three-base ] && p=$((PORT + 4))
	[ "$s" = three-alt ] && p=$((PORT + 7))
	for i in 0 1 2; do
		if r=$("$B/ycsb" -uri "mongodb://127.0.0.1:$((p + i))/?directConnection=true" -raftstats 2>/dev/null); then
			echo "$s: $r"
		fi
	done
done
