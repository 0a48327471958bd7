"""One server on core 0 under the peers' load generator on core 1, as `compare_signin.sh` runs
them. Shared by `peers-profile.py`, `peers-pairs.py` and `peers-sweep.py`, which
`scripts/bench-peers.sh` runs.

The environment names the programs: SIGNET_BIN (a release `signet`), GO_RP (the Go peer),
PY (the venv's python) and PEERS (../shared/peers).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server started on core 0 for one run, with its own directory in `work`; stopped on exit.

    `server` is "signet" or "go_rp"; `binary` replaces SIGNET_BIN and `extra` adds to the
    environment of a Signet (to compare two builds or two settings). A Signet's database is in
    its directory, or in a directory of its own under `db_dir`, removed on exit.
    """

    def __init__(self, server: str, env: dict[str, str], work: str, binary: str | None = None,
                 extra: dict[str, str] | None = None, db_dir: str | None = None):
        self.env, self.port = env, free_port()
        self.out = tempfile.mkdtemp(dir=work, prefix=server + ".")
        # A database elsewhere (db_dir: /dev/shm measures what the disk's syncs cost) goes with the run.
        self.db = tempfile.mkdtemp(dir=db_dir, prefix="signet-db.") if db_dir else self.out
        if server == "signet":
            self.cmd = ["taskset", "-c", "0", binary or env["SIGNET_BIN"], "serve", "--listen", f"127.0.0.1:{self.port}",
                        "--database", f"sqlite:{self.db}/signet.db"]
            self.client, self.ready = "dev", f"http://127.0.0.1:{self.port}/healthz"
        else:
            self.cmd = ["taskset", "-c", "0", env["GO_RP"], "--port", str(self.port)]
            self.client, self.ready = "test-client", None
        self.extra = extra or {}

    def __enter__(self) -> "Server":
        self.log = open(os.path.join(self.out, "log"), "w")
        self.proc = subprocess.Popen(self.cmd, cwd=self.out, stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "SIGNET_RATE_LIMITS_ENABLED": "false", **self.extra})
        try:
            for _ in range(150):
                if self.proc.poll() is not None:
                    break  # it exited: waiting longer would only delay the report
                try:
                    if self.ready:
                        urllib.request.urlopen(self.ready, timeout=1).read()
                    else:
                        socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return self
                except OSError:
                    time.sleep(0.1)
            raise RuntimeError(f"{self.cmd[3]} did not become ready on port {self.port} "
                               f"(exit status {self.proc.poll()}); its log: {self.log.name}\n{self.tail()}")
        except BaseException:
            self.__exit__()  # failed or interrupted while waiting: the server does not outlive the script
            raise

    def tail(self, lines: int = 20) -> str:
        """The last lines of the server's log, for a report of why it did not start."""
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def __exit__(self, *_: object) -> None:
        self.proc.terminate()
        self.proc.wait()
        self.log.close()
        if self.db != self.out:
            shutil.rmtree(self.db, ignore_errors=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def load(self, duration: int, concurrency: str) -> subprocess.Popen:
        """Starts `load_signin.py` against this server (2 s of warm-up, then `duration` s)."""
        return subprocess.Popen(
            [self.env["PY"], os.path.join(self.env["PEERS"], "load_signin.py"), "--base", f"http://localhost:{self.port}",
             "--client-id", self.client, "--concurrency", concurrency, "--duration", str(duration),
             "--warmup", "2", "--server-pid", str(self.pid), "--cpu", "1", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def metrics(self, wanted: list[tuple[str, str]]) -> list[float]:
        """For each (name, labels) in `wanted`, the sum of that metric's samples on this Signet's
        /metrics whose labels contain `labels` (0 when it has none); one read for all of them,
        so they describe the same moment."""
        lines = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5).read().decode().splitlines()
        return [sum(float(line.rsplit(" ", 1)[1]) for line in lines
                    if (line.startswith(name + " ") or line.startswith(name + "{")) and labels in line)
                for name, labels in wanted]

    def threads(self, named: str) -> tuple[int, int, float]:
        """One pass over the server's threads (`/proc/PID/task`): the voluntary and involuntary
        context switches of all of them so far, and the seconds on the processor of those named
        `named` (from their scheduler statistics). A thread that ended meanwhile no longer counts."""
        voluntary = involuntary = 0
        nanoseconds = 0
        base = f"/proc/{self.pid}/task"
        for tid in os.listdir(base):
            try:
                with open(f"{base}/{tid}/status") as status:
                    for line in status:
                        if line.startswith("voluntary_ctxt_switches:"):
                            voluntary += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            involuntary += int(line.split()[1])
                with open(f"{base}/{tid}/comm") as comm, open(f"{base}/{tid}/schedstat") as stat:
                    if comm.read().strip() == named:
                        nanoseconds += int(stat.read().split()[0])
            except FileNotFoundError:
                continue
        return voluntary, involuntary, nanoseconds / 1e9


def idle_entries(core: int = 0) -> int | None:
    """How many times `core` has gone idle since boot (the kernel's cpuidle counters, every
    state summed; on this virtual machine each is a halt of the virtual processor), or None
    where the kernel does not publish them."""
    paths = glob.glob(f"/sys/devices/system/cpu/cpu{core}/cpuidle/state*/usage")
    if not paths:
        return None
    total = 0
    for path in paths:
        with open(path) as f:
            total += int(f.read())
    return total


def per_sign_in(before: int | None, after: int | None, sign_ins: float) -> float:
    """What ``idle_entries`` counted between two reads, per sign-in (NaN where it reads nothing)."""
    return float("nan") if before is None or after is None else (after - before) / sign_ins


# A busy loop that runs only when nothing else on its processor can (SCHED_IDLE).
SPIN = "import os\nos.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\nwhile True:\n    pass\n"


@contextlib.contextmanager
def idle_spinner(core: int = 0) -> Iterator[None]:
    """A diagnosis, never a setting: a process on `core` that keeps it from going idle, so the
    server's threads never wake on a processor that halted. Its own time is not the server's, so
    whatever it saves the server is what idling costs there; it does not make the server cheaper."""
    spinner = subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-c", SPIN])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def result(load: subprocess.Popen) -> dict:
    """The load generator's JSON report, once it has finished."""
    return json.loads(load.communicate()[0])


# Sign-ins, WAL syncs, and the syncs' summed time and count (their histogram's _sum and _count);
# with durability `normal` there are no syncs, and those read 0.
COUNTERS = [("signet_ceremonies_total", 'ceremony="sign_in",outcome="success"'), ("signet_sqlite_wal_syncs_total", ""),
            ("signet_sqlite_wal_sync_seconds_sum", ""), ("signet_sqlite_wal_sync_seconds_count", "")]


def wait_for_window(duration: int) -> float:
    """Sleeps from a load's start (2 s of warm-up, then `duration` s) to the start of the window
    in the middle of its measured part, and returns the window's length in seconds."""
    window = max(1.0, duration / 2)
    time.sleep(2 + (duration - window) / 2)
    return window


def idle_counts() -> tuple[int | None, int | None]:
    """``idle_entries`` of core 0 (the server's) and of core 1 (the load generator's), read together."""
    return idle_entries(0), idle_entries(1)


def both_sides(report: dict, before: tuple, after: tuple, sign_ins: float) -> dict[str, float]:
    """Per sign-in between two ``idle_counts`` reads: core 0's idle entries ("idle") and core 1's
    ("idle1"), with the load generator's own CPU per sign-in from its report ("generator"). In a
    closed loop one side waits for the other, and on this machine a processor that waits halts and
    runs slower once woken; these say which side that is."""
    return {"idle": per_sign_in(before[0], after[0], sign_ins), "idle1": per_sign_in(before[1], after[1], sign_ins),
            "generator": report["client_cpu_us_per_sign_in"]}


def measure(env: dict[str, str], work: str, binary: str | None = None, extra: dict[str, str] | None = None,
            db_dir: str | None = None, concurrency: str | None = None, spin: bool = False) -> dict[str, float]:
    """One run of a Signet: the generator's figures, with thread switches, WAL syncs and core 0's
    and core 1's idle entries per sign-in over a window in the middle of the run (env: DURATION=8,
    CONCURRENCY=16). With `spin`, an ``idle_spinner`` keeps core 0 busy during the run."""
    duration = int(env.get("DURATION", "8"))
    with idle_spinner() if spin else contextlib.nullcontext(), \
            Server("signet", env, work, binary=binary, extra=extra, db_dir=db_dir) as server:
        load = server.load(duration, concurrency or env.get("CONCURRENCY", "16"))
        window = wait_for_window(duration)
        idle_before = idle_counts()
        before = server.threads(named="signet.sync"), *server.metrics(COUNTERS)
        time.sleep(window)
        after = server.threads(named="signet.sync"), *server.metrics(COUNTERS)
        idle_after = idle_counts()
        report = result(load)
    (voluntary0, involuntary0, syncer0), signins0, syncs0, seconds0, timed0 = before
    (voluntary1, involuntary1, syncer1), signins1, syncs1, seconds1, timed1 = after
    sign_ins = max(1.0, signins1 - signins0)
    return {
        "syncer_us_per_sync": 1e6 * (syncer1 - syncer0) / max(1.0, syncs1 - syncs0),
        "sync_ms": 1000 * (seconds1 - seconds0) / max(1.0, timed1 - timed0),
        "rate": report["sign_ins_per_s"], "p50": report["latency_ms"]["p50"], "cpu": report["server_cpu_us_per_sign_in"],
        "voluntary": (voluntary1 - voluntary0) / sign_ins, "involuntary": (involuntary1 - involuntary0) / sign_ins,
        "syncs": (syncs1 - syncs0) / sign_ins, "errors": sum(report["errors"].values()),
        **both_sides(report, idle_before, idle_after, sign_ins),
    }


def measure_go(env: dict[str, str], work: str, concurrency: str, spin: bool = False) -> dict[str, float]:
    """One run of go_rp: the generator's figures, and core 0's and core 1's idle entries per sign-in
    over the same middle window as ``measure`` (sign-ins from the generator's rate, go_rp has no metrics).
    With `spin`, an ``idle_spinner`` keeps core 0 busy during the run."""
    duration = int(env.get("DURATION", "8"))
    with idle_spinner() if spin else contextlib.nullcontext(), Server("go_rp", env, work) as server:
        load = server.load(duration, concurrency)
        window = wait_for_window(duration)
        idle_before = idle_counts()
        time.sleep(window)
        idle_after = idle_counts()
        report = result(load)
    sign_ins = max(1.0, report["sign_ins_per_s"] * window)
    return {
        "rate": report["sign_ins_per_s"], "cpu": report["server_cpu_us_per_sign_in"], "errors": sum(report["errors"].values()),
        **both_sides(report, idle_before, idle_after, sign_ins),
    }
