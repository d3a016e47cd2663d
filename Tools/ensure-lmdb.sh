#!/usr/bin/env bash
# Installs LMDB (headers, library, pkg-config file and the mdb_* utilities) when missing.
# Debian/Ubuntu: apt-get, with sudo when not root. Other systems: says what to install.
set -euo pipefail

if pkg-config --exists lmdb 2>/dev/null && command -v mdb_stat >/dev/null 2>&1; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "LMDB is missing: install liblmdb-dev (or lmdb) and lmdb-utils with your package manager." >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "installing liblmdb-dev needs root or sudo" >&2; exit 1; }
    sudo="sudo"
fi

echo "Installing liblmdb-dev and lmdb-utils…" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -qq liblmdb-dev lmdb-utils pkg-config >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq liblmdb-dev lmdb-utils pkg-config >/dev/null
fi
pkg-config --exists lmdb
