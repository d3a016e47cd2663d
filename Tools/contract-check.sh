#!/usr/bin/env bash
# Checks the sync server against its OpenAPI document with schemathesis (every check): starts a
# throwaway `evstore serve` on a free loopback port with a temporary data directory and token
# file, runs a bounded number of generated requests per operation plus stateful sequences, stops
# the server, and fails on any failure. Then the same against the PostgreSQL backend, on the
# database in EVSTORE_TEST_POSTGRES_URL (Tools/with-postgres.sh starts one; CI=true without it
# is a failure).
#
# Installs schemathesis in a virtual environment under .build/contract-venv when it is missing
# (and python3-venv with apt-get, with sudo when not root, when Python cannot make one).
#
#   ./Tools/contract-check.sh                      # 100 examples per operation, a random seed
#   CONTRACT_EXAMPLES=500 CONTRACT_SEED=7 ./Tools/contract-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version="${SCHEMATHESIS_VERSION:-4.32.5}"
examples="${CONTRACT_EXAMPLES:-100}"
seed="${CONTRACT_SEED:-$RANDOM$RANDOM}"
venv=".build/contract-venv"
schemathesis="$venv/bin/schemathesis"

apt_install() { ./Tools/apt-install.sh "$@"; }

if ! "$schemathesis" --version 2>/dev/null | grep -qF "$version"; then
    command -v python3 >/dev/null 2>&1 || apt_install python3
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        apt_install python3-venv python3-pip
        python3 -m venv "$venv"
    fi
    echo "Installing schemathesis $version in $venv…" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$version"
fi

evstore=".build/debug/evstore"
[ -x "$evstore" ] || swift build --product evstore

work="$(mktemp -d "${TMPDIR:-/tmp}/contract-check.XXXXXX")"
server=""
cleanup() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

token="contract-$RANDOM$RANDOM$RANDOM"
echo "$token *" >"$work/tokens"

# check NAME SERVE-ARGS…: runs schemathesis against `evstore serve SERVE-ARGS…`.
check() {
    local name="$1"
    shift
    # Live pulls answer at once here: a generated `wait` must not hold the run for 25 s a request.
    "$evstore" serve "$@" --port 0 --tokens "$work/tokens" --pull-wait-limit 0 >"$work/server.out" 2>"$work/server.log" &
    server=$!
    local port=""
    for _ in $(seq 1 300); do
        port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/server.out")"
        [ -n "$port" ] && break
        kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; echo "the server did not start" >&2; return 1; }
        sleep 0.1
    done
    [ -n "$port" ] || { echo "the server did not report its port within 30 s" >&2; return 1; }

    echo "contract check ($name): schemathesis $version, every check, $examples examples per operation, seed $seed" >&2
    local status=0
    # From the temporary directory: schemathesis keeps its cache in the working directory.
    (cd "$work" && exec "$root/$schemathesis" --config-file "$root/Tools/contract-check.toml" run "http://127.0.0.1:$port/openapi.json" \
        --checks all --header "Authorization: Bearer $token" --max-examples "$examples" --seed "$seed" \
        --workers 1 --request-timeout 10 --generation-database none --no-color) || status=$?
    if ! kill -0 "$server" 2>/dev/null; then
        echo "the server stopped during the check:" >&2
        tail -n 50 "$work/server.log" >&2
        status=1
    fi
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
    if [ "$status" -ne 0 ]; then
        echo "contract check ($name) failed (replay with CONTRACT_SEED=$seed)" >&2
    fi
    return "$status"
}

root="$PWD"
status=0
check lmdb --data "$work/data" || status=1
if [ -n "${EVSTORE_TEST_POSTGRES_URL:-}" ]; then
    check postgres --postgres "$EVSTORE_TEST_POSTGRES_URL" || status=1
elif [ "${CI:-}" = "true" ]; then
    echo "contract check (postgres): no database (EVSTORE_TEST_POSTGRES_URL); run through Tools/with-postgres.sh" >&2
    status=1
else
    echo "contract check (postgres): skipped, no EVSTORE_TEST_POSTGRES_URL (./Tools/test.sh starts a database)" >&2
fi
exit "$status"
