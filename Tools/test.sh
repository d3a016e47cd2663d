#!/usr/bin/env bash
# Runs the test suite: installs LMDB when missing, builds, and runs every test; then, when no
# arguments select tests, checks the sync server against its OpenAPI document (contract-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./Tools/ensure-lmdb.sh
swift build --build-tests
swift test --skip-build "$@"
if [ "$#" -eq 0 ]; then ./Tools/contract-check.sh; fi
