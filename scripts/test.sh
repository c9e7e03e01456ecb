#!/usr/bin/env bash
# Runs Cairn's whole test suite: vet, then every package's tests with the
# race detector (the engine, the server and the end-to-end tests are
# concurrent code), including the end-to-end tests that start a real cairnd
# and MongoDB's CRUD conformance tests (read from ../shared/conformance when
# that folder exists next to the repository), and the checks against
# Debian's prometheus-mongodb-exporter and mongosh, which
# scripts/install-tools.sh installs first when it can (set
# CAIRN_SKIP_TOOL_INSTALL=1 to skip that; a missing tool skips its test).
#
# It ends with one line, "N passed, N failed, N skipped", over every test
# of every package.
#
# Usage: scripts/test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  echo "scripts/test.sh: Go 1.26 or newer is required (https://go.dev/dl/)" >&2
  exit 1
fi

if [ "${CAIRN_SKIP_TOOL_INSTALL:-}" != 1 ]; then
  echo "== tools"
  scripts/install-tools.sh
fi

echo "== go vet"
go vet ./...

# Two end-to-end checks run against tools operators use when those are
# installed, and are skipped otherwise; say so, since go test prints skips
# only with -v.
if ! command -v prometheus-mongodb-exporter >/dev/null 2>&1; then
  echo "note: prometheus-mongodb-exporter is not installed: TestMongoDBExporter will be skipped (scripts/install-tools.sh installs it)"
fi
if ! command -v mongosh >/dev/null 2>&1; then
  echo "note: mongosh is not installed: TestMongosh will be skipped (scripts/install-tools.sh installs it)"
fi

# go test's JSON events go through internal/tools/testsummary, which
# prints a line per package as it finishes, the output of failed tests,
# the conformance runner's per-suite counts, every skipped test with its
# reason, and closes with "N passed, N failed, N skipped".
echo "== go test"
summary="$(mktemp -d)/testsummary"
go build -o "$summary" ./internal/tools/testsummary
CAIRN_VET_DONE=1 go test -race -count=1 -timeout 30m -json "$@" ./... 2>&1 | "$summary"
