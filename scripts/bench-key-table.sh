#!/usr/bin/env bash
# What a table of multiples made for each public key would do to ES256 verification, the largest
# part of a sign-in's cost: a diagnosis of an option Signet does not take (README, "Side by side
# with the peers"). Builds scripts/key-table.c against the system's OpenSSL and runs it on core 0.
#   scripts/bench-key-table.sh                  32 keys in turn, 2 MiB read between calls
#   KEYS=1000 SWEEP_KIB=0 CALLS=3000 scripts/bench-key-table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-clang} -O2 -Wall -Werror -o "$work/key-table" scripts/key-table.c -lcrypto
taskset -c "${CORE:-0}" "$work/key-table" "${KEYS:-32}" "${SWEEP_KIB:-2048}" "${CALLS:-3000}"
