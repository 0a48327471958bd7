#!/usr/bin/env bash
# Builds Signet (release) and runs it. With no arguments: `signet serve` in development mode
# (127.0.0.1:8080, RP ID localhost, client_id "dev", ./signet.db). Otherwise the arguments are
# a signet command, e.g. `scripts/run.sh verify registration FILE.json`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build-release.sh
if [ $# -eq 0 ]; then set -- serve; fi
exec .build/release/signet "$@"
