#!/usr/bin/env python3
"""Two builds or two settings of Signet in alternating pairs under the peers' load.

Run by `PAIRS=N scripts/bench-peers.sh`. Each run starts Signet on core 0 and
`load_signin.py` on core 1, as `compare_signin.sh` does; the pairs alternate their order
(A B, B A, A B, ...) so that a machine that speeds up or slows down during the series weighs
on both sides alike. This machine's speed moves by more than most changes save, so a change
is judged by how many pairs it wins and by the median of the differences, never by one run.

Each run prints sign-ins/s, p50, the server CPU per sign-in (the generator's figure, from
/proc over its measured window) and, over a window in the middle of the run, the server's
thread switches (voluntary: a thread blocked; involuntary: it was preempted or yielded), its
WAL syncs per sign-in and how long a sync took on average.

  env: A_ENV, B_ENV ("NAME=value NAME=value", added to each side's environment),
       A_BIN, B_BIN (default SIGNET_BIN), A_DB_DIR, B_DB_DIR (where that side's database
       goes, default the run's directory on disk), CONCURRENCY=16 DURATION=8,
       and SIGNET_BIN, PY, PEERS as for peers-profile.py.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import peerslib


def settings(text: str) -> dict[str, str]:
    pairs = [item.split("=", 1) for item in text.split()]
    if any(len(p) != 2 for p in pairs):
        sys.exit(f"peers-pairs: expected NAME=value items, got {text!r}")
    return dict(pairs)


# Sign-ins, WAL syncs, and the syncs' summed time and count (their histogram's _sum and _count);
# with durability `normal` there are no syncs, and those read 0.
COUNTERS = [("signet_ceremonies_total", 'ceremony="sign_in",outcome="success"'), ("signet_sqlite_wal_syncs_total", ""),
            ("signet_sqlite_wal_sync_seconds_sum", ""), ("signet_sqlite_wal_sync_seconds_count", "")]


def run(env: dict[str, str], work: str, binary: str, extra: dict[str, str], db_dir: str | None) -> dict[str, float]:
    """One run: the generator's figures, with switches and syncs per sign-in over a middle window."""
    duration = int(env.get("DURATION", "8"))
    with peerslib.Server("signet", env, work, binary=binary, extra=extra, db_dir=db_dir) as server:
        load = server.load(duration, env.get("CONCURRENCY", "16"))
        window = max(1.0, duration / 2)
        time.sleep(2 + (duration - window) / 2)
        before = server.switches(), *server.metrics(COUNTERS)
        time.sleep(window)
        after = server.switches(), *server.metrics(COUNTERS)
        report = peerslib.result(load)
    switches0, signins0, syncs0, seconds0, timed0 = before
    switches1, signins1, syncs1, seconds1, timed1 = after
    sign_ins = max(1.0, signins1 - signins0)
    return {
        "sync_ms": 1000 * (seconds1 - seconds0) / max(1.0, timed1 - timed0),
        "rate": report["sign_ins_per_s"], "p50": report["latency_ms"]["p50"], "cpu": report["server_cpu_us_per_sign_in"],
        "voluntary": (switches1[0] - switches0[0]) / sign_ins, "involuntary": (switches1[1] - switches0[1]) / sign_ins,
        "syncs": (syncs1 - syncs0) / sign_ins, "errors": sum(report["errors"].values()),
    }


def main() -> None:
    env = dict(os.environ)
    for key in ("SIGNET_BIN", "PY", "PEERS"):
        if key not in env:
            sys.exit(f"peers-pairs: set {key}")
    pairs = int(env.get("PAIRS", "6"))
    sides = {
        side: (env.get(f"{side}_BIN") or env["SIGNET_BIN"], settings(env.get(f"{side}_ENV", "")), env.get(f"{side}_DB_DIR") or None)
        for side in ("A", "B")
    }
    for name, (binary, extra, db_dir) in sides.items():
        print(f"{name}: {binary} {' '.join(f'{k}={v}' for k, v in extra.items())}{f' database in {db_dir}' if db_dir else ''}")
    print(f"{env.get('CONCURRENCY', '16')} clients, {env.get('DURATION', '8')} s a run; switches and syncs per sign-in")
    print("| pair | side | sign-ins/s | p50 ms | server CPU µs/sign-in | voluntary switches | involuntary | WAL syncs | a sync, ms | errors |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu: dict[str, dict[int, float]] = {"A": {}, "B": {}}
    with tempfile.TemporaryDirectory() as work:
        for pair in range(1, pairs + 1):
            for side in ("A", "B") if pair % 2 else ("B", "A"):
                binary, extra, db_dir = sides[side]
                r = run(env, work, binary, extra, db_dir)
                cpu[side][pair] = r["cpu"]
                print(f"| {pair} | {side} | {r['rate']:.0f} | {r['p50']:.2f} | {r['cpu']:.1f} | {r['voluntary']:.2f} | "
                      f"{r['involuntary']:.2f} | {r['syncs']:.3f} | {r['sync_ms']:.2f} | {r['errors']} |", flush=True)
    differences = [cpu["B"][p] - cpu["A"][p] for p in cpu["A"]]
    print(f"A median {statistics.median(cpu['A'].values()):.1f} µs, B median {statistics.median(cpu['B'].values()):.1f} µs; "
          f"B - A median {statistics.median(differences):+.1f} µs; B lower in {sum(d < 0 for d in differences)} of {len(differences)} pairs")


if __name__ == "__main__":
    main()
