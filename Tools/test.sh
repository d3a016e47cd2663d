#!/usr/bin/env bash
# Runs the test suite: installs LMDB when missing, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./Tools/ensure-lmdb.sh
swift build --build-tests
swift test --skip-build "$@"
