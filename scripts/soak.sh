#!/usr/bin/env bash
# A soak: `signet bench soak` for DURATION seconds (default 1800) against its own server, a mixed
# load (sign-ups, sign-ins, refreshes, approved actions, account reads, bad requests), with a row
# of resident memory, open descriptors, threads and p99 every minute (every tenth of the run when
# it is shorter than ten minutes). Exits 1 when they do not stay flat after the warm-up. Each of
# the four load clients makes at most SOAK_ACCOUNTS accounts (default 25), so that what grows is
# a leak, not data: with ever more accounts the caches grow (about 2.6 KB an account, measured)
# until their bounds.
#   scripts/soak.sh 1800          the half-hour soak
#   scripts/soak.sh 60            the CI-sized one (scripts/test.sh runs it with the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-1800}
bin=${SIGNET_BIN:-}
if [ -z "$bin" ]; then
    scripts/bootstrap.sh
    scripts/build-release.sh
    bin=$PWD/.build/release/signet
fi
interval=60
if [ "$duration" -lt 600 ]; then interval=$(( duration / 10 > 1 ? duration / 10 : 1 )); fi
work=$(mktemp -d /tmp/signet-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Not exec: the shell must outlive the soak for its trap to remove the folder (exec left one
# behind at every run). Its exit status is the script's.
"$bin" bench soak --duration "$duration" --interval "$interval" --accounts "${SOAK_ACCOUNTS:-25}"
