#!/usr/bin/env bash
# Starts a local 3-member replica set rs0 on 127.0.0.1, ports BASE_PORT+1..+3
# (default 27101-27103), data and logs in ${DIR:-/tmp/cairn-rs0}, each member
# a cairnd process on loopback, and initiates it with mongosh when mongosh is
# installed (otherwise it prints the replSetInitiate command to run once on
# the first member). Then connect with
#   mongodb://127.0.0.1:27101,127.0.0.1:27102,127.0.0.1:27103/?replicaSet=rs0
# Stop the set with: scripts/replset3.sh stop
#
# Environment:
#   DIR          data directory of the set (m1, m2, m3, their logs and pids)
#   BASE_PORT    member i listens on BASE_PORT+i (default 27100)
#   CAIRND       the cairnd binary (default: ./cairnd, built if missing)
#   KEYFILE      a key file shared by the members (--keyFile: members
#                authenticate to each other, access control is on); "generate"
#                writes a new one to $DIR/keyfile. With a key file the script
#                creates the user admin (password $ADMIN_PASSWORD, required) on
#                the first member before initiating as that user.
#   METRICS_BASE member i serves Prometheus metrics on 127.0.0.1:METRICS_BASE+i
#   EXTRA_ARGS   more cairnd arguments for every member (e.g. the TLS flags)
set -euo pipefail
DIR=${DIR:-/tmp/cairn-rs0}
BASE_PORT=${BASE_PORT:-27100}

if [ "${1:-}" = stop ]; then
	for f in "$DIR"/m*.pid; do
		[ -f "$f" ] || continue
		kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	exit 0
fi

BIN=${CAIRND:-$(dirname "$0")/../cairnd}
if [ ! -x "$BIN" ]; then
	(cd "$(dirname "$0")/.." && go build -o cairnd ./cmd/cairnd)
	BIN=$(dirname "$0")/../cairnd
fi
mkdir -p "$DIR"
args=()
if [ -n "${KEYFILE:-}" ]; then
	if [ "$KEYFILE" = generate ]; then
		KEYFILE=$DIR/keyfile
		[ -f "$KEYFILE" ] || (umask 077 && head -c 756 /dev/urandom | base64 >"$KEYFILE")
	fi
	: "${ADMIN_PASSWORD:?set ADMIN_PASSWORD: the password of the user admin the script creates}"
	args+=(--keyFile "$KEYFILE")
fi
# shellcheck disable=SC2206 # EXTRA_ARGS is split on purpose
args+=(${EXTRA_ARGS:-})
for i in 1 2 3; do
	port=$((BASE_PORT + i))
	mkdir -p "$DIR/m$i"
	margs=("${args[@]}")
	if [ -n "${METRICS_BASE:-}" ]; then
		margs+=(--metricsAddr "127.0.0.1:$((METRICS_BASE + i))")
	fi
	"$BIN" --replSet rs0 --bind_ip 127.0.0.1 --port "$port" --dbpath "$DIR/m$i" "${margs[@]}" >>"$DIR/m$i.log" 2>&1 &
	echo $! >"$DIR/m$i.pid"
	echo "member $i: 127.0.0.1:$port (pid $!, log $DIR/m$i.log)"
done

first=127.0.0.1:$((BASE_PORT + 1))
initiate="db.adminCommand({replSetInitiate: {_id: 'rs0', members: [
  {_id: 0, host: '127.0.0.1:$((BASE_PORT + 1))'},
  {_id: 1, host: '127.0.0.1:$((BASE_PORT + 2))'},
  {_id: 2, host: '127.0.0.1:$((BASE_PORT + 3))'}]}})"
if ! command -v mongosh >/dev/null; then
	echo "Initiate once, on $first:"
	echo "$initiate"
	exit 0
fi
sh=(mongosh --quiet "mongodb://$first/?directConnection=true")
# Wait (up to 20 s) for the first member to answer.
for _ in $(seq 1 40); do
	"${sh[@]}" --eval 'db.adminCommand({ping: 1}).ok' >/dev/null 2>&1 && break
	sleep 0.5
done
if [ -n "${KEYFILE:-}" ]; then
	# The localhost exception: the first user, then everything as it (a
	# set started before has its user already).
	"${sh[@]}" --eval "try { db.getSiblingDB('admin').createUser({user: 'admin', pwd: '$ADMIN_PASSWORD', roles: ['root']}) } catch (e) { if (e.codeName != 'Unauthorized') throw e }" >/dev/null
	sh=(mongosh --quiet "mongodb://admin:$ADMIN_PASSWORD@$first/?directConnection=true&authSource=admin")
fi
"${sh[@]}" --eval "try { printjson($initiate) } catch (e) { if (e.codeName != 'AlreadyInitialized') throw e; print('rs0 was initiated before') }"
# Wait (up to 30 s) for one primary and two secondaries.
for _ in $(seq 1 60); do
	states=$("${sh[@]}" --eval 'try { rs.status().members.map(m => m.stateStr).sort().join(",") } catch (e) { "" }' 2>/dev/null || true)
	if [ "$states" = "PRIMARY,SECONDARY,SECONDARY" ]; then
		echo "rs0 is up: one PRIMARY, two SECONDARY"
		uri="mongodb://127.0.0.1:$((BASE_PORT + 1)),127.0.0.1:$((BASE_PORT + 2)),127.0.0.1:$((BASE_PORT + 3))/?replicaSet=rs0"
		if [ -n "${KEYFILE:-}" ]; then
			uri="mongodb://admin:<password>@127.0.0.1:$((BASE_PORT + 1)),127.0.0.1:$((BASE_PORT + 2)),127.0.0.1:$((BASE_PORT + 3))/?replicaSet=rs0&authSource=admin"
		fi
		echo "connect with $uri"
		exit 0
	fi
	sleep 0.5
done
echo "rs0 did not become healthy within 30 s (states: ${states:-none}); see $DIR/m*.log" >&2
exit 1
