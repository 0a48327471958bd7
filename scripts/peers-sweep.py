#!/usr/bin/env python3
"""Signet and go_rp at several client counts, and what a WAL sync costs Signet.

Run by `SWEEP="8 16 32 64" scripts/bench-peers.sh`. Each run starts one server on core 0 and
`load_signin.py` on core 1, as `compare_signin.sh` does: per round, every client count, Signet
then go_rp. For each Signet run it reads, over a window in the middle of the run, how many
WAL syncs each sign-in shared (`signet_sqlite_wal_syncs_total` per successful sign-in), and
what the syncer thread (`signet.sync`) spent per sync: the part of a sync's cost that is its own;
and for both servers how many times core 0 went idle per sign-in (each a halt of the virtual
processor here, and a wake-up after it).

Held answers wait for the sync that covers their writes, and one sync covers every sign-in
that reached it, so a sign-in's CPU is modelled as a part of its own plus a share of a sync:

    server CPU per sign-in = per sign-in + per sync x syncs per sign-in

fitted by least squares over every Signet run. "Per sync" is everything that happens once per
sync, whoever pays it: the `fdatasync`, the batch's COMMIT and WAL write, the syncer's wake-ups,
the workers' waking for the answers it releases, and the idling while every client waits for
the disk. Fewer clients share a sync, so Signet's CPU per sign-in falls as clients grow; the
fit says where it would be if a sync cost nothing. R² says how well the line fits the runs.

A last table gives both sides of each closed loop: the load generator's own CPU per sign-in and
core 1's idle entries beside the server's. Whichever side waits for the other halts, and on this
machine a processor runs slower for a while after a halt.

  env: SWEEP (client counts), ROUNDS=2 DURATION=8, SPIN=1 (every run beside
       peerslib.idle_spinner on core 0: the same fit with halting free, a diagnosis, not a
       setting), and SIGNET_BIN, GO_RP, PY, PEERS as for peers-profile.py.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

import peerslib


def fit(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares y = a + b x: returns (a, b, R²)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        sys.exit("peers-sweep: every run had the same syncs per sign-in; sweep more client counts")
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    total = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / total if total else 1.0
    return a, b, r2


def main() -> None:
    env = dict(os.environ)
    for key in ("SIGNET_BIN", "GO_RP", "PY", "PEERS"):
        if key not in env:
            sys.exit(f"peers-sweep: set {key}")
    counts = env.get("SWEEP", "8 16 32 64").split()
    if len(counts) < 2 or not all(c.isdigit() and int(c) > 0 for c in counts):
        sys.exit(f"peers-sweep: SWEEP needs two or more client counts, got {env.get('SWEEP')!r}")
    rounds = int(env.get("ROUNDS", "2"))
    duration = int(env.get("DURATION", "8"))
    spin = env.get("SPIN") == "1"
    print(f"{rounds} round(s) of {duration} s a run; Signet's WAL syncs per sign-in over each run's middle window"
          + ("; every run beside an idle spinner on core 0" if spin else ""))
    print("| round | clients | Signet sign-ins/s | Signet CPU µs/sign-in | WAL syncs per sign-in | syncer thread µs/sync | Signet core 0 idle per sign-in | "
          "go_rp sign-ins/s | go_rp CPU µs/sign-in | go_rp core 0 idle per sign-in |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    signet: dict[str, list[dict[str, float]]] = {c: [] for c in counts}
    go: dict[str, list[dict[str, float]]] = {c: [] for c in counts}
    with tempfile.TemporaryDirectory() as work:
        for r in range(1, rounds + 1):
            for clients in counts:
                s = peerslib.measure(env, work, concurrency=clients, spin=spin)
                g = peerslib.measure_go(env, work, clients, spin=spin)
                signet[clients].append(s)
                go[clients].append(g)
                errors = s["errors"] + g["errors"]
                print(f"| {r} | {clients} | {s['rate']:.0f} | {s['cpu']:.1f} | {s['syncs']:.3f} | {s['syncer_us_per_sync']:.0f} | {s['idle']:.3f} | "
                      f"{g['rate']:.0f} | {g['cpu']:.1f} | {g['idle']:.3f} |" + (f" {errors} errors" if errors else ""), flush=True)
    base, per_sync, r2 = fit([(run["syncs"], run["cpu"]) for runs in signet.values() for run in runs])
    print()
    print(f"Fit over {sum(len(v) for v in signet.values())} Signet runs (R² {r2:.3f}): "
          f"{base:.1f} µs per sign-in + {per_sync:.0f} µs per WAL sync")
    print()
    print("| clients | Signet CPU (median) | syncs per sign-in | of it, the syncs' share | go_rp CPU (median) | Signet / go_rp | with syncs free |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for clients in counts:
        cpu = statistics.median(run["cpu"] for run in signet[clients])
        syncs = statistics.median(run["syncs"] for run in signet[clients])
        peer = statistics.median(run["cpu"] for run in go[clients])
        print(f"| {clients} | {cpu:.1f} µs | {syncs:.3f} | {per_sync * syncs:.1f} µs | {peer:.1f} µs | {cpu / peer:.2f} | "
              f"{(cpu - per_sync * syncs) / peer:.2f} |")
    print()
    print("Both sides of each run (medians): the load generator's CPU per sign-in and core 1's idle entries beside the server's")
    print("| clients | server | server CPU µs/sign-in | generator CPU µs/sign-in | both | core 0 idle per sign-in | core 1 idle per sign-in |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for clients in counts:
        for name, runs in (("Signet", signet[clients]), ("go_rp", go[clients])):
            med = {key: statistics.median(run[key] for run in runs) for key in ("cpu", "generator", "idle", "idle1")}
            both = statistics.median(run["cpu"] + run["generator"] for run in runs)
            print(f"| {clients} | {name} | {med['cpu']:.1f} | {med['generator']:.1f} | {both:.1f} | {med['idle']:.3f} | {med['idle1']:.3f} |")


if __name__ == "__main__":
    main()
