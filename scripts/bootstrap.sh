#!/usr/bin/env bash
# Installs the Debian packages Signet builds against, when any is missing.
#   bootstrap.sh        what building and running need
#   bootstrap.sh test   and what the tests need besides: headless Chromium and its driver
#                       (the hosted pages' tests), and a venv in .build/pyenv with Selenium,
#                       Authlib, requests and standardwebhooks from PyPI (the browser, OIDC-client
#                       and signed log stream tests), and promtool (Debian's prometheus package,
#                       without its recommended node exporter) for the shipped alerting rules,
#                       and systemd-analyze (Debian's systemd) and strace for the shipped unit
#   bootstrap.sh profile  and valgrind (scripts/bench-callgrind.sh)
# Idempotent; needs root or sudo only when something must be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libssl-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev pkg-config libcurl4 python3 python3-aiosmtpd python3-jwt python3-cryptography openssl libqrencode-dev publicsuffix)
[ "${1:-}" = test ] && packages+=(chromium chromium-driver python3-venv fonts-dejavu-core)
[ "${1:-}" = profile ] && packages+=(valgrind binutils curl)
# Installed without their recommended packages.
lean=()
[ "${1:-}" = test ] && lean+=(prometheus systemd strace)
. scripts/retry.sh
# The packages of the arguments that are not installed, a line each.
absent() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}
mapfile -t missing < <(absent "${packages[@]}")
mapfile -t missing_lean < <(absent "${lean[@]}")
if ((${#missing[@]} + ${#missing_lean[@]})); then
    echo "bootstrap: installing ${missing[*]} ${missing_lean[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    retry $sudo apt-get update -qq
    if ((${#missing[@]})); then
        retry $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ((${#missing_lean[@]})); then
        retry $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_lean[@]}" >/dev/null
    fi
fi
command -v swift >/dev/null || { echo "bootstrap: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
# axe-core's script (the page audit) comes in the axe-playwright-python wheel: only the script is
# used, so the wheel is installed without Playwright.
if [ "${1:-}" = test ] && ! .build/pyenv/bin/python -c "import importlib.util, selenium, authlib, requests, standardwebhooks; assert importlib.util.find_spec('axe_playwright_python')" 2>/dev/null; then
    echo "bootstrap: making .build/pyenv (selenium, authlib, requests, standardwebhooks, axe-core's script from PyPI)" >&2
    mkdir -p .build
    /usr/bin/python3 -m venv .build/pyenv
    retry .build/pyenv/bin/pip install -q selenium authlib requests standardwebhooks
    retry .build/pyenv/bin/pip install -q --no-deps axe-playwright-python==0.1.8
fi
