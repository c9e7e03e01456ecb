#!/usr/bin/env bash
# Checks cairnd against Debian's prometheus-mongodb-exporter, an mgo-based
# exporter that speaks only the legacy OP_QUERY protocol: it installs the
# exporter when it is missing (apt-get, as root, without prompting), then
# runs the end-to-end test that starts cairnd and the exporter on loopback
# ports, scrapes /metrics and checks mongodb_up 1, counters that move, and
# an exporter log free of errors (test/e2e/exporter_test.go).
#
# The default test run (scripts/test.sh) installs the exporter the same way
# (scripts/install-tools.sh) and runs the same test; this script runs only
# that check, and fails if the exporter cannot be installed.
#
# Usage: scripts/check-exporter.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bin=prometheus-mongodb-exporter
if ! command -v "$bin" >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "check-exporter: $bin is not installed; install Debian's $bin package (apt-get install $bin) and rerun" >&2
    exit 1
  fi
  echo "== installing $bin"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$bin" >/dev/null
  # The package enables a service on port 9001 where an init system runs;
  # the check starts its own exporter on a free loopback port.
fi

echo "== go test -run TestMongoDBExporter ./test/e2e"
out=$(go test -count=1 -run 'TestMongoDBExporter$' -v ./test/e2e 2>&1) || { echo "$out"; exit 1; }
echo "$out"
if grep -q -- '--- SKIP' <<<"$out"; then
  echo "check-exporter: the test was skipped" >&2
  exit 1
fi
