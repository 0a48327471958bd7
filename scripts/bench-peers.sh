#!/usr/bin/env bash
# Signet side by side with the peers in ../shared/peers (the Go server go_rp and the Python
# reference_rp), one load generator, one run: server on core 0, generator on core 1.
#   scripts/bench-peers.sh                        durable SQLite (the default), at 16 and 64 clients,
#                                                 medians of 3 rounds (the issue's measurement;
#                                                 CONCURRENCY="8 16 32 64" ROUNDS=N for others)
#   SIGNET_DATABASE_DURABILITY=normal scripts/bench-peers.sh
#   PROFILE=1 scripts/bench-peers.sh              where each one's CPU goes, Signet beside go_rp
#                                                 (perf; scripts/peers-profile.py)
#   PAIRS=8 B_ENV="SIGNET_THREADS=1" scripts/bench-peers.sh
#   PAIRS=8 A_BIN=/tmp/signet-before scripts/bench-peers.sh
#                                                 two settings or two builds of Signet in
#                                                 alternating pairs (scripts/peers-pairs.py)
#   SWEEP="8 16 32 64" scripts/bench-peers.sh     Signet and go_rp at each client count, and a fit
#                                                 of Signet's CPU per sign-in to its WAL syncs per
#                                                 sign-in: what a sync costs, what a sign-in costs
#                                                 besides (scripts/peers-sweep.py)
#   PAIRS=6 B_SPIN=1 scripts/bench-peers.sh       the same build with and without a process that
#                                                 keeps core 0 from idling (SCHED_IDLE, its time not
#                                                 the server's): what halting costs, a diagnosis only
#   SPIN=1 SWEEP="8 16 32 64" scripts/bench-peers.sh  the sweep with that process beside every run
#   KEEP_RUN=1 scripts/bench-peers.sh             keeps the run's directory (servers' logs, Signet's database)
#   DB_DIR=/dev/shm scripts/bench-peers.sh        Signet's database in that directory (memory: what
#   PAIRS=4 B_DB_DIR=/dev/shm scripts/bench-peers.sh  this disk's syncs cost; a measurement, not a setting)
# Prints the peers' table and Signet's server CPU per sign-in as a ratio to each peer's.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=${SIGNET_PEERS:-../shared/peers}
[ -d "$peers" ] || { echo "bench-peers.sh: no peers at $peers (set SIGNET_PEERS)" >&2; exit 1; }
scripts/bootstrap.sh
scripts/build-release.sh
work=${TMPDIR:-/tmp}/signet-peers
mkdir -p "$work"
# The Python side in a venv, and go_rp built offline from Debian's packages, once per machine.
[ -x "$work/venv/bin/python" ] || python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -r "$peers/requirements.txt"
go_rp=$(INSTALL=1 "$peers/go_rp/build.sh" "$work/go_rp" | tail -n 1)
# PROFILE, PAIRS and SWEEP run one of the Python scripts (peerslib.py starts the servers for them).
mode=""
if [ "${PROFILE:-0}" = 1 ]; then
    command -v perf >/dev/null || { echo "bench-peers.sh: PROFILE=1 needs perf (Debian: apt-get install linux-perf)" >&2; exit 1; }
    mode=peers-profile.py
elif [ -n "${PAIRS:-}" ]; then
    mode=peers-pairs.py
elif [ -n "${SWEEP:-}" ]; then
    mode=peers-sweep.py
fi
if [ -n "$mode" ]; then
    exec env PY="$work/venv/bin/python" PEERS="$peers" SIGNET_BIN="$PWD/.build/release/signet" GO_RP="$go_rp" \
        "$work/venv/bin/python" "scripts/$mode"
fi
# compare_signin.sh keeps Signet's database and each server's log in its output directory
# (about 280 MB a run); the peers keep their data in memory. KEEP_RUN=1 keeps the directory
# for a look at the logs and says where it is; otherwise it goes when the script ends.
out=$(mktemp -d "${DB_DIR:-$work}/run.XXXXXX")
if [ "${KEEP_RUN:-0}" = 1 ]; then
    trap 'echo "bench-peers.sh: the run is kept in $out" >&2' EXIT
else
    trap 'rm -rf "$out"' EXIT
fi
# compare_signin.sh alone runs 8 and 32 clients once; the target is stated at 16, medians of 3.
CONCURRENCY=${CONCURRENCY:-16 64} ROUNDS=${ROUNDS:-3} \
    PY="$work/venv/bin/python" PATH="$work/venv/bin:$PATH" SIGNET_BIN="$PWD/.build/release/signet" GO_RP="$go_rp" "$peers/compare_signin.sh" "$out"
