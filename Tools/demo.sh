#!/usr/bin/env bash
# The main job: installs LMDB when missing, builds evstore (release) and runs `evstore demo`.
# Extra arguments go to the demo, e.g. `./Tools/demo.sh --dir /tmp/demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./Tools/ensure-lmdb.sh
swift build -c release --product evstore
exec .build/release/evstore demo "$@"
