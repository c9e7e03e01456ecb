#!/usr/bin/env bash
# Starts a local 3-member replica set rs0 on 127.0.0.1:27101-27103 (data in
# ${DIR:-/tmp/cairn-rs0}), each member a cairnd process on loopback, and
# prints the replSetInitiate command to run once on the first member, e.g.
#   mongosh --port 27101 --eval '<printed command>'
# Then connect with mongodb://127.0.0.1:27101,127.0.0.1:27102,127.0.0.1:27103/?replicaSet=rs0
# Stop the set with: kill $(cat ${DIR:-/tmp/cairn-rs0}/*.pid)
set -euo pipefail
DIR=${DIR:-/tmp/cairn-rs0}
BIN=${CAIRND:-$(dirname "$0")/../cairnd}
if [ ! -x "$BIN" ]; then
	(cd "$(dirname "$0")/.." && go build -o cairnd ./cmd/cairnd)
	BIN=$(dirname "$0")/../cairnd
fi
mkdir -p "$DIR"
for i in 1 2 3; do
	port=$((27100 + i))
	mkdir -p "$DIR/m$i"
	"$BIN" --replSet rs0 --bind_ip 127.0.0.1 --port "$port" --dbpath "$DIR/m$i" >"$DIR/m$i.log" 2>&1 &
	echo $! >"$DIR/m$i.pid"
	echo "member $i: 127.0.0.1:$port (pid $!, log $DIR/m$i.log)"
done
cat <<CMD
Initiate once, on 127.0.0.1:27101:
db.adminCommand({replSetInitiate: {_id: "rs0", members: [
  {_id: 0, host: "127.0.0.1:27101"},
  {_id: 1, host: "127.0.0.1:27102"},
  {_id: 2, host: "127.0.0.1:27103"}]}})
CMD
