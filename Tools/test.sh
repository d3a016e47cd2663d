#!/usr/bin/env bash
# Runs the test suite: installs LMDB when missing, builds, and runs every test with a throwaway
# PostgreSQL server for the PostgreSQL backend (with-postgres.sh installs and starts it, and stops
# it afterwards); then, when no arguments select tests, checks the sync server against its
# OpenAPI document on both backends (contract-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./Tools/ensure-lmdb.sh
swift build --build-tests
if [ "$#" -eq 0 ]; then
    ./Tools/with-postgres.sh bash -c 'swift test --skip-build && ./Tools/contract-check.sh'
else
    ./Tools/with-postgres.sh swift test --skip-build "$@"
fi
