#!/usr/bin/env bash
# Builds the benchmark harness in release mode and runs it; arguments go to evstore-bench.
#
#   ./Tools/Benchmarks/run.sh                 # full run: N = 200,000, scaling at 100k and 1M
#   ./Tools/Benchmarks/run.sh --short         # CI: N = 20,000, about a minute after the build
#   ./Tools/Benchmarks/run.sh --large         # adds N = 10,000,000 to the scaling runs
#   ./Tools/Benchmarks/run.sh --scenarios append,search --events 50000 --format jsonl
#
# When the sync scenario runs (it does unless --scenarios leaves it out), a durable throwaway
# PostgreSQL (fsync and synchronous_commit on) is started for its PostgreSQL backend by
# Tools/with-postgres.sh with EVSTORE_PG_DURABLE=1, and stopped afterwards; --postgres URL uses
# that database instead.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/../ensure-lmdb.sh"
if [ ! -f /usr/include/sqlite3.h ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing libsqlite3-dev (SQLite for GRDB)…" >&2
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -qq libsqlite3-dev >/dev/null 2>&1 \
        || { $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq libsqlite3-dev >/dev/null; }
fi
cd "$here"
swift build -c release --product evstore-bench >&2
swift --version 2>/dev/null | head -1 | sed 's/^/toolchain: /'
if commit="$(git -C "$here/../.." rev-parse --short HEAD 2>/dev/null)"; then
    changed="$(git -C "$here/../.." status --porcelain -- Sources Tools/Benchmarks 2>/dev/null | wc -l | tr -d ' ')"
    echo "source:    commit $commit ($changed uncommitted changes in Sources and Tools/Benchmarks)"
fi
bench="$here/.build/release/evstore-bench"

# Whether the run needs a PostgreSQL server: the sync scenario is selected (all scenarios are by
# default) and no --postgres URL is given.
needs_postgres() {
    local previous="" scenarios="all"
    for argument in "$@"; do
        case "$argument" in --postgres | --help | -h) return 1 ;; esac
        [ "$previous" = --scenarios ] && scenarios="$argument"
        previous="$argument"
    done
    [ "$scenarios" = all ] || [[ ",$scenarios," == *,sync,* ]]
}

if needs_postgres "$@"; then
    EVSTORE_PG_DURABLE=1 exec "$here/../with-postgres.sh" \
        bash -c 'exec "$0" "$@" --postgres "$EVSTORE_TEST_POSTGRES_URL"' "$bench" "$@"
fi
exec "$bench" "$@"
