#!/usr/bin/env bash
# Builds Signet (release) and runs the signet command with the given arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
swift build -c release --product signet >&2
exec .build/release/signet "$@"
