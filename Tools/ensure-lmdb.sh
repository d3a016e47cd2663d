#!/usr/bin/env bash
# Installs LMDB (headers, library, pkg-config file and the mdb_* utilities) when missing.
# Debian/Ubuntu: apt-get, with sudo when not root. Other systems: says what to install.
set -euo pipefail

if pkg-config --exists lmdb 2>/dev/null && command -v mdb_stat >/dev/null 2>&1; then
    exit 0
fi

"$(dirname "$0")/apt-install.sh" liblmdb-dev lmdb-utils pkg-config
pkg-config --exists lmdb
