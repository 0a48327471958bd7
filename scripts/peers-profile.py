#!/usr/bin/env python3
"""Where each server's CPU per sign-in goes, Signet beside go_rp, under the peers' load.

Run by `PROFILE=1 scripts/bench-peers.sh`, which builds both servers and the load generator's
venv first. Each server runs on core 0 and `load_signin.py` on core 1, as in
`compare_signin.sh`; `perf record -e cpu-clock -g` samples the server for a few seconds in the
middle of its run. Every sample is put in one part (by the shared object it ran in, and for the
kernel by the system call its call chain entered through), and a part's share of the samples,
times the server CPU per sign-in the load generator measured in the same run, gives its
microseconds. Prints one Markdown table.

  env: SIGNET_BIN, GO_RP, PY (the venv's python), PEERS (../shared/peers),
       CONCURRENCY=16 DURATION=12 RECORD=5 ROUNDS=1
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import peerslib

PARTS = [
    ("crypto", "cryptography (P-256, SHA-256, the random generator)"),
    ("sqlite", "SQLite's library"),
    ("rest", "the rest of user space (HTTP, JSON, WebAuthn, tokens, runtime, allocation)"),
    ("tcp", "kernel: loopback TCP (send, receive)"),
    ("sync", "kernel: the WAL's fdatasync"),
    ("fileio", "kernel: SQLite's file writes, reads and locks (pwrite, pread, fcntl)"),
    ("wait", "kernel: waiting and waking (epoll, futex, eventfd, sched_yield)"),
    ("other", "kernel: everything else (the log's writes, interrupts, random bytes, page faults)"),
]

# The system call a kernel sample entered through, by the first frame of its chain that names one.
SYSCALL_PART = {
    "fdatasync": "sync", "fsync": "sync",
    "pwrite64": "fileio", "pread64": "fileio", "fcntl": "fileio", "ftruncate": "fileio",
    "epoll_wait": "wait", "epoll_pwait": "wait", "epoll_ctl": "wait", "futex": "wait",
    "sched_yield": "wait", "nanosleep": "wait",
    "sendmsg": "tcp", "sendto": "tcp", "recvfrom": "tcp", "recvmsg": "tcp",
}
SYSCALL = re.compile(r"^(?:__x64_sys_|__sys_|ksys_)(\w+)$")
GO_CRYPTO = re.compile(r"^(crypto/|math/big\.|p256|vendor/golang\.org/x/crypto/)")


def part_of(frames: list[tuple[str, str]]) -> str:
    """The part of one sample: frames are (symbol, shared object), the leaf first."""
    symbol, dso = frames[0]
    if dso != "[kernel.kallsyms]":
        if "libcrypto" in dso or GO_CRYPTO.match(symbol):
            return "crypto"
        return "sqlite" if "libsqlite3" in dso else "rest"
    names = [s for s, d in frames if d == "[kernel.kallsyms]"]
    for name in names:
        match = SYSCALL.match(name)
        if not match:
            continue
        call = match.group(1)
        if call in ("write", "read"):
            # A write or read on a socket is TCP; on an eventfd it is a wake-up.
            if any(n.startswith(("sock_", "tcp_", "inet_")) for n in names):
                return "tcp"
            return "wait" if any("eventfd" in n for n in names) else "other"
        if call in SYSCALL_PART:
            return SYSCALL_PART[call]
    return "other"


def parse_script(text: str) -> dict[str, int]:
    """Counts per part from `perf script` output (one sample: a header line, then its frames)."""
    counts = {key: 0 for key, _ in PARTS}
    frames: list[tuple[str, str]] = []
    frame = re.compile(r"^\s+[0-9a-f]+\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)$")
    for line in text.splitlines() + [""]:
        if not line.strip():
            if frames:
                counts[part_of(frames)] += 1
            frames = []
            continue
        match = frame.match(line)
        if match:
            frames.append((match.group(1), match.group(2)))
    return counts


def run(server: str, env: dict[str, str], work: str) -> tuple[float, dict[str, int]]:
    """One run of one server: (server CPU µs per sign-in, samples per part)."""
    with peerslib.Server(server, env, work) as running:
        duration = int(env.get("DURATION", "12"))
        load = running.load(duration, env.get("CONCURRENCY", "16"))
        record = int(env.get("RECORD", "5"))
        time.sleep(2 + max(0, (duration - record) / 2))
        data = os.path.join(running.out, "perf.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-p", str(running.pid),
                        "-o", data, "--", "sleep", str(record)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        result = peerslib.result(load)
        script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True, check=True).stdout
        return float(result["server_cpu_us_per_sign_in"]), parse_script(script)


def main() -> None:
    env = dict(os.environ)
    for key in ("SIGNET_BIN", "GO_RP", "PY", "PEERS"):
        if key not in env:
            sys.exit(f"peers-profile: set {key}")
    rounds = int(env.get("ROUNDS", "1"))
    figures: dict[str, list[dict[str, float]]] = {"signet": [], "go_rp": []}
    cpu: dict[str, list[float]] = {"signet": [], "go_rp": []}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(rounds):
            for server in figures:
                us, counts = run(server, env, work)
                total = sum(counts.values()) or 1
                cpu[server].append(us)
                figures[server].append({key: us * n / total for key, n in counts.items()})
    print(f"| part, {env.get('CONCURRENCY', '16')} clients, µs per sign-in (median of {rounds}) | Signet | go_rp | difference |")
    print("| --- | ---: | ---: | ---: |")
    for key, label in PARTS:
        s = statistics.median(f[key] for f in figures["signet"])
        g = statistics.median(f[key] for f in figures["go_rp"])
        print(f"| {label} | {s:.1f} | {g:.1f} | {s - g:+.1f} |")
    s, g = statistics.median(cpu["signet"]), statistics.median(cpu["go_rp"])
    print(f"| **server CPU per sign-in** (load_signin.py) | **{s:.1f}** | **{g:.1f}** | {s - g:+.1f} (ratio {s / g:.2f}) |")


if __name__ == "__main__":
    main()
