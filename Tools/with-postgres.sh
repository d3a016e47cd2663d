#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server, and stops it afterwards:
#   ./Tools/with-postgres.sh COMMAND [ARGS…]
#   EVSTORE_PG_DURABLE=1 ./Tools/with-postgres.sh COMMAND [ARGS…]
# Installs Debian's postgresql package when initdb is missing (apt-get; sudo when not root),
# creates a cluster in a temporary directory as an unprivileged user (PostgreSQL refuses to run
# as root: root runs it as the package's `postgres` user), starts it on a free loopback port and
# exports EVSTORE_TEST_POSTGRES_URL to the command.
#
# For the tests (the default) the server runs with fsync=off and synchronous_commit=off, and with
# EVSTORE_TEST_POSTGRES_URL already set the command runs against that database instead. With
# EVSTORE_PG_DURABLE=1 (the benchmark) the server is durable, as in production: fsync and
# synchronous_commit on, every commit flushed to disk before it is acknowledged; it always starts
# its own server then, since a database from the environment may be a test one.
set -euo pipefail

durable="${EVSTORE_PG_DURABLE:-0}"
if [ "$durable" != 1 ] && [ -n "${EVSTORE_TEST_POSTGRES_URL:-}" ]; then
    exec "$@"
fi

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

bin="$(find_bin)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    "$(dirname "$0")/apt-install.sh" postgresql
    bin="$(find_bin)"
fi

# Who runs the server: ourselves, or `postgres` (created by the package) when we are root.
as_user=()
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
    as_user=(runuser -u postgres --)
fi

dir="$(mktemp -d /tmp/evstore-pg.XXXXXX)"
chmod 755 "$dir"
[ "${#as_user[@]}" -eq 0 ] || chown postgres "$dir"

# A free loopback port: ask the kernel for one (bash's /dev/tcp tells a taken port).
port=""
for _ in $(seq 1 50); do
    candidate=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port="$candidate"; break; fi
done
[ -n "$port" ] || { echo "no free loopback port found for PostgreSQL" >&2; exit 1; }

stop() {
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

"${as_user[@]}" "$bin/initdb" -D "$dir/data" -U evstore --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
if [ "$durable" = 1 ]; then
    flush="-c fsync=on -c synchronous_commit=on"
    purpose="durable (fsync, synchronous_commit on)"
else
    flush="-c fsync=off -c synchronous_commit=off"
    purpose="for the tests"
fi
"${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=1000 $flush" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
"$bin/createdb" -h 127.0.0.1 -p "$port" -U evstore evstore_test

export EVSTORE_TEST_POSTGRES_URL="postgres://evstore@127.0.0.1:$port/evstore_test?sslmode=disable"
echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') $purpose on 127.0.0.1:$port ($dir)" >&2
"$@"
