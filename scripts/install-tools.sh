#!/usr/bin/env bash
# Installs the tools two end-to-end checks run against, when they are
# missing and this machine can install them: Debian's
# prometheus-mongodb-exporter (apt-get, as root or through sudo without a
# password) for TestMongoDBExporter, and mongosh (npm) for TestMongosh.
# It never fails the caller: a tool it cannot install is reported, and its
# test skips.
#
# scripts/test.sh runs it first (set CAIRN_SKIP_TOOL_INSTALL=1 to skip).
#
# Usage: scripts/install-tools.sh
set -uo pipefail

note() { echo "install-tools: $*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

exporter=prometheus-mongodb-exporter
if ! command -v "$exporter" >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    note "no apt-get: $exporter not installed (TestMongoDBExporter will skip)"
  else
    note "installing $exporter (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! as_root apt-get install -y -qq --no-install-recommends "$exporter" >/dev/null 2>&1; then
      # A fresh machine may have no package lists yet.
      as_root apt-get update -qq >/dev/null 2>&1 &&
        as_root apt-get install -y -qq --no-install-recommends "$exporter" >/dev/null 2>&1 ||
        note "could not install $exporter (TestMongoDBExporter will skip)"
    fi
  fi
fi

if ! command -v mongosh >/dev/null 2>&1; then
  if ! command -v npm >/dev/null 2>&1; then
    note "no npm: mongosh not installed (TestMongosh will skip)"
  else
    note "installing mongosh (npm install -g mongosh)"
    if ! npm install -g --silent mongosh >/dev/null 2>&1 && ! as_root npm install -g --silent mongosh >/dev/null 2>&1; then
      note "could not install mongosh (TestMongosh will skip)"
    fi
  fi
fi
exit 0
