#!/usr/bin/env bash
# Installs Debian packages: apt-get install (then update and retry when that fails), with sudo
# when not root. On a system without apt-get, says what to install and fails.
#   ./Tools/apt-install.sh PACKAGE…
set -euo pipefail

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install $* with your package manager" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "installing $* needs root or sudo" >&2; exit 1; }
    sudo="sudo"
fi
echo "Installing $*…" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -qq "$@" >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq "$@" >/dev/null
fi
