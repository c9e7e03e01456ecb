#!/usr/bin/env bash
# Runs Cairn's whole test suite: vet, then every package's tests with the
# race detector (the engine, the server and the end-to-end tests are
# concurrent code), including the end-to-end tests that start a real cairnd
# and MongoDB's CRUD conformance tests (read from ../shared/conformance when
# that folder exists next to the repository).
#
# Usage: scripts/test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  echo "scripts/test.sh: Go 1.26 or newer is required (https://go.dev/dl/)" >&2
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test"
go test -race -count=1 -timeout 30m "$@" ./...
