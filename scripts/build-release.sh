#!/usr/bin/env bash
# The release build of `signet`, the same for every script that runs it: the Swift runtime and
# Foundation are linked in (--static-swift-stdlib), so the binary needs no Swift toolchain where
# it runs, and its calls into them are direct rather than through the dynamic linker's tables
# (about 7% less server CPU per sign-in here; docs/performance-history.md).
# The system libraries (OpenSSL, SQLite, libpq, libcurl, libqrencode) stay shared, so their
# security updates from the distribution apply without a rebuild. The link prints one warning,
# gold's about `mktemp` inside the toolchain's own libFoundationEssentials.a, not Signet's code.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release --product signet --static-swift-stdlib "$@" >&2
