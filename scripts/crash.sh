#!/usr/bin/env bash
# The longer kill -9 run (issue 18): the crash tests with many kill moments, on SQLite and, with
# a throw-away PostgreSQL, on two instances. Each moment is one `signet serve` killed with
# SIGKILL that far into a mixed load, restarted, and checked: every answered sign-up signs in,
# every answered revocation holds, every rotated refresh token is refused as reused, every used
# auth session and action challenge is refused when replayed.
# Then the PostgreSQL fault test (the database stopped and started under load) FAULT_ROUNDS times
# (default 5): no request may be answered by a closed connection.
#   scripts/crash.sh [POINTS]   POINTS: comma-separated seconds (default 0.02,...,20: 14 kills)
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-0.02,0.05,0.1,0.2,0.3,0.5,0.8,1,1.5,2,3,5,10,20}
scripts/bootstrap.sh
swift build --build-tests >&2
pgdir=$(mktemp -d /tmp/signet-pg.XXXXXX)
pgport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'scripts/postgres.sh stop "$pgdir"' EXIT
SIGNET_TEST_POSTGRES="$(scripts/postgres.sh start "$pgdir" "$pgport" fast)?sslmode=disable"
export SIGNET_TEST_POSTGRES SIGNET_CRASH_POINTS="$points"
swift test --skip-build --filter CrashTests 2>&1 | tee .build/crash.log | grep -E "kill -9 after|✘|Test run"
grep -q "Test run with .* passed" .build/crash.log
for round in $(seq 1 "${FAULT_ROUNDS:-5}"); do
    swift test --skip-build --filter DatabaseFaultTests 2>&1 | tee .build/fault.log | grep -E "✘|Test run" | sed "s/^/fault round $round: /"
    grep -q "Test run with .* passed" .build/fault.log
done
