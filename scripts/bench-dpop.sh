#!/usr/bin/env bash
# What DPoP adds to a sign-in: `bench login` without and with a DPoP proof on every token
# request, alternately, ROUNDS times (default 3), with the medians side by side.
#   scripts/bench-dpop.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-8}
scripts/bootstrap.sh >&2
scripts/build-release.sh
out=$(mktemp -d)
for i in $(seq "$rounds"); do
    for mode in bearer dpop; do
        flag=""; [ "$mode" = dpop ] && flag="--dpop"
        .build/release/signet bench login --concurrency 64 --duration "$seconds" --json $flag > "$out/$mode-$i.json"
    done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(mode): return [json.load(open(f"{out}/{mode}-{i}.json")) for i in range(1, rounds + 1)]
rows = [("server CPU per sign-in (µs)", "server_cpu_us_per_signin"), ("floor (µs)", "floor_cpu_us"), ("ratio to floor", "ratio_vs_floor"),
        ("sign-ins per second", "signins_per_s"), ("p99 (ms)", "p99_ms")]
print(f"| figure, median of {rounds} | bearer | DPoP | difference |")
print("| --- | --- | --- | --- |")
for name, key in rows:
    b = statistics.median(float(r[key]) for r in runs("bearer")); d = statistics.median(float(r[key]) for r in runs("dpop"))
    print(f"| {name} | {b:.1f} | {d:.1f} | {d - b:+.1f} |")
print(f"\none ES256 verification (the floor's part): {statistics.median(float(r['floor_verify_us']) for r in runs('bearer')):.1f} µs")
PY
