#!/usr/bin/env bash
# kvbench.sh runs bench/cmd/kvbench with every engine, LMDB included.
#
# It installs Debian's liblmdb-dev when lmdb.h is missing (as root, or
# through sudo), builds kvbench with the lmdb build tag and runs it, passing
# every argument through:
#
#   bench/kvbench.sh -scale 10 -out bench/results -name kv-10
#
# Without -out the results go to the current directory. Set KVBENCH_TAGS to
# add build tags (KVBENCH_TAGS=nokv leaves Cairn's kv out).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ ! -f /usr/include/lmdb.h ]; then
	echo "kvbench.sh: installing liblmdb-dev" >&2
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		sudo="sudo"
	fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq liblmdb-dev >&2
fi

tags="lmdb"
if [ -n "${KVBENCH_TAGS:-}" ]; then
	tags="$tags,$KVBENCH_TAGS"
fi

bin="$(mktemp -d)/kvbench"
trap 'rm -rf "$(dirname "$bin")"' EXIT
echo "kvbench.sh: building kvbench (tags $tags)" >&2
(cd "$here" && go build -tags "$tags" -o "$bin" ./cmd/kvbench)

"$bin" -command "bench/kvbench.sh $*" "$@"
