#!/usr/bin/env bash
# Runs every Signet check: build with warnings as errors, the whole test suite, the fuzz
# corpus replay and the Apple-only sources' parse check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh test
echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors
echo "== Apple-only sources parse (they build only on Apple platforms)"
for f in Sources/SignetClientApple/*.swift; do swiftc -parse "$f"; done
echo "== fuzz corpus replay"
scripts/fuzz.sh replay
echo "== PostgreSQL for the store and scale-out tests (a throw-away cluster on a loopback port)"
pgdir=$(mktemp -d /tmp/signet-pg.XXXXXX)
pgport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'scripts/postgres.sh stop "$pgdir"' EXIT
# sslmode is passed through to libpq untouched, as a deployment's would be.
SIGNET_TEST_POSTGRES="$(scripts/postgres.sh start "$pgdir" "$pgport" fast)?sslmode=disable"
export SIGNET_TEST_POSTGRES
echo "PostgreSQL at $SIGNET_TEST_POSTGRES"
echo "== tests"
# The hosted pages' Chromium test runs here whatever it finds (bootstrap installed it all).
export SIGNET_REQUIRE_BROWSER=1
swift test --skip-build --parallel 2>&1 | tee .build/test.log
grep -q "Test run with .* passed" .build/test.log || { echo "test.sh: Swift Testing did not report a passing run" >&2; exit 1; }
echo "== the server tests again, each server on a real socket (answers wait for their writes' shared commit, as in production)"
SIGNET_TEST_TRANSPORT=socket swift test --skip-build --parallel --filter SignetServerTests --skip WebBrowserTests 2>&1 | tee .build/test-socket.log
grep -q "Test run with .* passed" .build/test-socket.log || { echo "test.sh: the socket pass did not report a passing run" >&2; exit 1; }
echo "== soak, CI-sized: 60 s of mixed load; resident memory, descriptors and threads must stay flat"
SIGNET_BIN=$PWD/.build/debug/signet scripts/soak.sh 60
