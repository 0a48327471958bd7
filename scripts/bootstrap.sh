#!/usr/bin/env bash
# Installs the Debian packages Signet builds against, when any is missing.
# Idempotent; needs root or sudo only when something must be installed.
set -euo pipefail
packages=(libssl-dev libsqlite3-dev libpq-dev libmicrohttpd-dev libcurl4-openssl-dev pkg-config libcurl4 python3 python3-aiosmtpd python3-jwt python3-cryptography openssl libqrencode-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "bootstrap: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "bootstrap: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
