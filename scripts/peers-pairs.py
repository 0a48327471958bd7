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
WAL syncs per sign-in, how long a sync took on average, and how many times core 0 went idle
(halted) per sign-in.

  env: A_ENV, B_ENV ("NAME=value NAME=value", added to each side's environment),
       A_BIN, B_BIN (default SIGNET_BIN), A_DB_DIR, B_DB_DIR (where that side's database
       goes, default the run's directory on disk), A_SPIN=1, B_SPIN=1 (that side's runs with
       peerslib.idle_spinner on core 0: what idling costs the server, a diagnosis, not a
       setting), CONCURRENCY=16 DURATION=8,
       and SIGNET_BIN, PY, PEERS as for peers-profile.py.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

import peerslib


def settings(text: str) -> dict[str, str]:
    pairs = [item.split("=", 1) for item in text.split()]
    if any(len(p) != 2 for p in pairs):
        sys.exit(f"peers-pairs: expected NAME=value items, got {text!r}")
    return dict(pairs)


def main() -> None:
    env = dict(os.environ)
    for key in ("SIGNET_BIN", "PY", "PEERS"):
        if key not in env:
            sys.exit(f"peers-pairs: set {key}")
    pairs = int(env.get("PAIRS", "6"))
    sides = {
        side: (env.get(f"{side}_BIN") or env["SIGNET_BIN"], settings(env.get(f"{side}_ENV", "")), env.get(f"{side}_DB_DIR") or None,
               env.get(f"{side}_SPIN") == "1")
        for side in ("A", "B")
    }
    for name, (binary, extra, db_dir, spin) in sides.items():
        print(f"{name}: {binary} {' '.join(f'{k}={v}' for k, v in extra.items())}{f' database in {db_dir}' if db_dir else ''}"
              f"{' with an idle spinner on core 0' if spin else ''}")
    print(f"{env.get('CONCURRENCY', '16')} clients, {env.get('DURATION', '8')} s a run; switches and syncs per sign-in")
    print("| pair | side | sign-ins/s | p50 ms | server CPU µs/sign-in | voluntary switches | involuntary | WAL syncs | a sync, ms | core 0 idle | errors |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu: dict[str, dict[int, float]] = {"A": {}, "B": {}}
    with tempfile.TemporaryDirectory() as work:
        for pair in range(1, pairs + 1):
            for side in ("A", "B") if pair % 2 else ("B", "A"):
                binary, extra, db_dir, spin = sides[side]
                r = peerslib.measure(env, work, binary, extra, db_dir, spin=spin)
                cpu[side][pair] = r["cpu"]
                print(f"| {pair} | {side} | {r['rate']:.0f} | {r['p50']:.2f} | {r['cpu']:.1f} | {r['voluntary']:.2f} | "
                      f"{r['involuntary']:.2f} | {r['syncs']:.3f} | {r['sync_ms']:.2f} | {r['idle']:.3f} | {r['errors']} |", flush=True)
    differences = [cpu["B"][p] - cpu["A"][p] for p in cpu["A"]]
    print(f"A median {statistics.median(cpu['A'].values()):.1f} µs, B median {statistics.median(cpu['B'].values()):.1f} µs; "
          f"B - A median {statistics.median(differences):+.1f} µs; B lower in {sum(d < 0 for d in differences)} of {len(differences)} pairs")


if __name__ == "__main__":
    main()
