#!/usr/bin/env python3
"""Checks deploy/systemd/signet.service against a real signet serve, for the tests.

usage: systemd-check.py SIGNET [DATABASE_URL]
1. systemd-analyze verify finds nothing to say about the unit (its ExecStart pointed at SIGNET),
   its offline security review rates its exposure at most MAX_EXPOSURE, and its restarts after
   failed starts never reach systemd's start limit.
2. signet serve starts under strace as the service manager would start it: NOTIFY_SOCKET set, as
   an unprivileged user when run as root (the unit's User=), its working directory the one place
   it may write (StateDirectory=), on SQLite or on DATABASE_URL (a PostgreSQL URL). It must send
   READY=1 only once /healthz answers, then take a sign-up, a sign-in, a device key and an
   approval from `signet authenticator`, and on SIGTERM send STOPPING=1 and exit 0. With the
   watchdog on (WATCHDOG_USEC, WATCHDOG_TEST_SECONDS here, the unit's WatchdogSec= in service) it
   must send WATCHDOG=1 from READY=1 to STOPPING=1 never further apart than that, and none after.
3. Every system call it made is one the unit's SystemCallFilter= allows, every socket it opened
   is of a family RestrictAddressFamilies= allows, no mapping was writable and executable or made
   executable later (MemoryDenyWriteExecute=), and it wrote nowhere but its working directory
   (ProtectSystem=strict).
4. A start that fails says why in STATUS= (without the database password) and never READY=1,
   to a socket in the abstract namespace (NOTIFY_SOCKET=@name).
5. (Without DATABASE_URL, 5 and 6.) A watchdog meant for another process (WATCHDOG_PID) is not
   fed, nor one whose WATCHDOG_USEC is not a number of microseconds (said once on standard error).
6. A worker held inside a request (another process holds the SQLite database's write lock) stops
   the feeding, and STATUS= names it; once the lock is let go the request is answered, and
   WATCHDOG=1 comes again with STATUS= back to "listening on".
7. (With DATABASE_URL.) A PostgreSQL that goes away (a forwarder between them cut) does not stop
   the feeding: requests fail at once with database_unavailable, and pass again once it is back.
Prints what it found, a line each; exits 1 with each problem on standard error.
systemd-check.py --trace TRACE DIRECTORY applies the rules of 3 alone to an strace -f output.
"""
import functools
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

MAX_EXPOSURE = 2.0
# The watchdog interval of the run under strace: short, so a run of a few seconds sees it fed
# several times; long enough that strace on a busy machine does not starve the feeder.
WATCHDOG_TEST_SECONDS = 2.0
# SIGNET_SYSTEMD_WATCHDOG=0 leaves the watchdog's run out (the tests' broken units, which break
# other things, need not wait for it); WatchdogSec= in the unit is still checked.
WATCHDOG = os.environ.get("SIGNET_SYSTEMD_WATCHDOG") != "0"
# SIGNET_SYSTEMD_UNIT: another unit to check (the tests' broken copies).
UNIT = os.environ.get("SIGNET_SYSTEMD_UNIT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "systemd", "signet.service")
NOBODY = 65534
problems = []


def problem(text):
    problems.append(text)


def directives(unit, name):
    """Every value of `name=` in the unit, in order."""
    return [line.split("=", 1)[1].strip() for line in unit.splitlines() if line.startswith(name + "=")]


def syscall_set(names):
    """The system calls the names stand for, groups (`@name`) expanded as systemd-analyze lists them."""
    calls = set()
    for name in names:
        calls |= group(name) if name.startswith("@") else {name}
    return calls


@functools.lru_cache(maxsize=None)
def group(name):
    """The system calls of one group, its groups expanded; each asked of systemd-analyze once
    (@system-service names @default, @basic-io and others that other groups name too)."""
    listing = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True).stdout
    members = [line.split("#")[0].strip() for line in listing.splitlines()[1:]]
    return frozenset(syscall_set([m for m in members if m]))


def allowed_syscalls(unit):
    """SystemCallFilter=: the first line not starting with ~ is the allow list; each ~ line takes from it."""
    allowed = None
    for value in directives(unit, "SystemCallFilter"):
        deny = value.startswith("~")
        names = syscall_set(value.lstrip("~").split())
        if deny:
            allowed = (allowed or set()) - names
        else:
            allowed = (allowed or set()) | names
    if allowed is None:
        problem("the unit has no SystemCallFilter=")
        return set()
    return allowed


def check_unit(signet, directory):
    """systemd-analyze's verify and offline security review; returns the unit's text."""
    with open(UNIT) as f:
        unit = f.read()
    execs = directives(unit, "ExecStart")
    if len(execs) != 1 or not execs[0].startswith("/usr/local/bin/signet serve "):
        problem(f"ExecStart= is not one signet serve: {execs}")
    # Restarts after a failed start (a database late at boot) must never reach the start limit
    # (systemd's defaults: 5 starts within 10 s), or the unit stays failed.
    restart = directives(unit, "RestartSec")
    seconds = float(restart[0].rstrip("s")) if restart else 0.1
    burst = int((directives(unit, "StartLimitBurst") or ["5"])[0])
    interval = float((directives(unit, "StartLimitIntervalSec") or ["10"])[0].rstrip("s"))
    if directives(unit, "Restart") != ["on-failure"] or seconds * burst <= interval:
        problem(f"Restart=on-failure every {seconds} s reaches the start limit ({burst} starts in {interval} s)")
    watchdog = directives(unit, "WatchdogSec")
    if len(watchdog) != 1 or not re.fullmatch(r"\d+s", watchdog[0]) or int(watchdog[0][:-1]) < 10:
        problem(f"WatchdogSec= is not one interval of 10 s or more: {watchdog}")
    copy = os.path.join(directory, "signet.service")
    with open(copy, "w") as f:
        f.write(unit.replace("/usr/local/bin/signet", signet))
    verify = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
    said = (verify.stdout + verify.stderr).strip()
    if verify.returncode != 0 or said:
        problem(f"systemd-analyze verify: exit {verify.returncode}: {said}")
    # --threshold counts tenths of the level it prints.
    threshold = f"--threshold={round(MAX_EXPOSURE * 10)}"
    security = subprocess.run(["systemd-analyze", "security", "--offline=true", threshold, copy], capture_output=True, text=True)
    level = re.search(r"Overall exposure level for signet.service: ([0-9.]+) (\w+)", security.stdout)
    if security.returncode != 0 or not level or float(level.group(1)) > MAX_EXPOSURE:
        problem(f"systemd-analyze security: exit {security.returncode}, over {MAX_EXPOSURE}: {security.stdout[-400:]}{security.stderr}")
    else:
        print(f"exposure {level.group(1)} {level.group(2)} (at most {MAX_EXPOSURE})")
    return unit


def receive(listener, seconds):
    """The next notification as a dict, or None after `seconds`."""
    listener.settimeout(seconds)
    try:
        message = listener.recv(4096).decode()
    except socket.timeout:
        return None
    return dict(line.split("=", 1) for line in message.split("\n") if "=" in line)


class Collector:
    """Every notification from READY=1 on, with when it came, read on a thread of its own (the
    socket's queue is not a clock)."""

    def __init__(self, listener):
        self.listener = listener
        self.received = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            try:
                said = receive(self.listener, 0.1)
            except OSError:  # closed under it: the run failed
                return
            if said is not None:
                self.received.append((time.monotonic(), said))

    def first(self, key, seconds):
        """The first notification with `key`, waiting up to `seconds`."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            for _, said in self.received:
                if key in said:
                    return said
            time.sleep(0.05)
        return None

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.received


def check_watchdog(received, started, interval):
    """WATCHDOG=1 from `started` (READY=1) until STOPPING=1, never more than `interval` apart."""
    stopping = next((at for at, said in received if said.get("STOPPING") == "1"), None)
    if stopping is None:
        return
    fed = [at for at, said in received if said.get("WATCHDOG") == "1"]
    before = [at for at in fed if at < stopping]
    after = len(fed) - len(before)
    marks = [started] + before + [stopping]
    gap = max(b - a for a, b in zip(marks, marks[1:]))
    if len(before) < 2 or gap >= interval or after:
        problem(f"the watchdog ({interval} s): {len(before)} WATCHDOG=1 before STOPPING=1, the longest gap {gap:.2f} s, {after} after")
    else:
        print(f"WATCHDOG=1 {len(before)} times in {stopping - started:.1f} s, at most {gap:.2f} s apart (interval {interval:g} s); none after STOPPING=1")


def notify_socket(directory, name):
    """A socket for the notifications and the NOTIFY_SOCKET that names it: a path in `directory`,
    or without one a name in the abstract namespace (`@name`), the other form systemd uses."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if directory is None:
        listener.bind("\0" + name)
        return listener, "@" + name
    path = os.path.join(directory, name)
    listener.bind(path)
    os.chmod(path, 0o777)  # the unprivileged server must be able to send to it
    return listener, path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(signet, database, scratch):
    """Runs signet serve under strace through a sign-in; returns the trace's text and the data directory."""
    data = os.path.join(scratch, "data")
    os.mkdir(data, 0o700)
    root = os.geteuid() == 0
    if root:
        os.chmod(scratch, 0o755)
        os.chown(data, NOBODY, NOBODY)
    listener, path = notify_socket(scratch, "notify")
    port = free_port()
    trace = os.path.join(scratch, "trace")
    command = ["strace", "-f", "-qq", "-o", trace] + (["-u", "nobody"] if root else [])
    command += [signet, "serve", "--listen", f"127.0.0.1:{port}"] + (["--database", database] if database else [])
    environment = dict(os.environ, NOTIFY_SOCKET=path, HOME=data)
    if WATCHDOG:
        environment["WATCHDOG_USEC"] = str(int(WATCHDOG_TEST_SECONDS * 1e6))
    with open(os.path.join(scratch, "stderr"), "w") as errors:
        server = subprocess.Popen(command, cwd=data, env=environment, stdout=subprocess.DEVNULL, stderr=errors)
    started = time.monotonic()
    try:
        ready = receive(listener, 120)
        if not ready or ready.get("READY") != "1":
            problem(f"no READY=1 from signet serve (got {ready}); its standard error: {tail(scratch)}")
            return None, data
        # Ready means answering: no retry here.
        try:
            health = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).status
        except OSError as error:
            health = error
        if health != 200:
            problem(f"READY=1 came before /healthz answered 200 ({health})")
        if not ready.get("STATUS", "").startswith(f"listening on http://127.0.0.1:{port}") or not ready.get("MAINPID", "").isdigit():
            problem(f"READY=1 without its STATUS= and MAINPID=: {ready}")
        print(f"READY=1 {time.monotonic() - started:.1f} s after the start under strace; {ready.get('STATUS')}")
        ready_at = time.monotonic()
        collector = Collector(listener)
        state = os.path.join(scratch, "phone.json")
        for step in (["signup", "--email", "ada@example.com", "--name", "Ada"], ["signin"], ["enroll-device-key"],
                     ["approve", '{"type":"payment","amount":200,"currency":"EUR"}'], ["passkeys"]):
            done = subprocess.run([signet, "authenticator", step[0], "--url", f"http://127.0.0.1:{port}", "--state", state] + step[1:],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                problem(f"authenticator {step[0]}: exit {done.returncode}: {done.stderr[-400:]}")
        # Long enough for the watchdog to be fed a few times, however quick the flow was.
        if WATCHDOG:
            time.sleep(max(0, ready_at + 2.5 * WATCHDOG_TEST_SECONDS - time.monotonic()))
        os.kill(int(ready.get("MAINPID", server.pid)), signal.SIGTERM)
        stopping = collector.first("STOPPING", 60)
        stopped = stopping is not None and stopping.get("STOPPING") == "1"
        status = server.wait(timeout=60)
        received = collector.stop()
        if not stopped:
            problem(f"no STOPPING=1 after SIGTERM (got {[said for _, said in received][-3:]})")
        if WATCHDOG:
            check_watchdog(received, ready_at, WATCHDOG_TEST_SECONDS)
        if status != 0:
            problem(f"signet serve exited {status} after SIGTERM: {tail(scratch)}")
        print(f"{'STOPPING=1' if stopped else 'no STOPPING=1'} on SIGTERM, exit {status}")
    finally:
        cleanup(server, listener)
    with open(trace) as f:
        return f.read(), data


def tail(scratch):
    with open(os.path.join(scratch, "stderr")) as f:
        return f.read()[-800:]


def check_trace(unit, text, data):
    """What the trace shows the server did, against what the unit allows."""
    allowed = allowed_syscalls(unit)
    # The trace starts with the exec of signet itself (strace's -u changes the user before it).
    used = set(re.findall(r"^\d+\s+([a-z0-9_]+)\(", text, re.M)) | set(re.findall(r"^\d+\s+<\.\.\. ([a-z0-9_]+) resumed>", text, re.M))
    outside = sorted(used - allowed)
    if outside:
        problem(f"system calls SystemCallFilter= refuses: {outside}")
    print(f"{len(used)} distinct system calls, all allowed by SystemCallFilter=" if not outside else f"{len(used)} distinct system calls")
    families = set(re.findall(r"^\d+\s+socket\((AF_[A-Z0-9]+)", text, re.M))
    permitted = set(" ".join(directives(unit, "RestrictAddressFamilies")).split())
    if not permitted or families - permitted:
        problem(f"socket families outside RestrictAddressFamilies= {sorted(permitted)}: {sorted(families - permitted)}")
    print(f"socket families {sorted(families)}")
    if directives(unit, "MemoryDenyWriteExecute") != ["yes"]:
        problem("the unit does not set MemoryDenyWriteExecute=yes")
    refused = []
    for line in text.splitlines():
        call = re.match(r"^\d+\s+(mmap|mprotect|pkey_mprotect)\((.*)", line)
        if call and "PROT_EXEC" in call.group(2) and (call.group(1) != "mmap" or "PROT_WRITE" in call.group(2)):
            refused.append(line[:200])
    if refused:
        # The first few: the report stays short enough for a pipe its reader empties last.
        problem(f"{len(refused)} mappings MemoryDenyWriteExecute= refuses, the first: {refused[:3]}")
    # Writes: files opened to write or create, directories made, names renamed or removed.
    writes = []
    for line in text.splitlines():
        opened = re.match(r'^\d+\s+(?:open|openat)\((?:[A-Z_]+|\d+), "([^"]*)", ([A-Z_|]+)', line)
        if opened and re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", opened.group(2)):
            writes.append(opened.group(1))
        changed = re.match(r'^\d+\s+(?:mkdir|mkdirat|unlink|unlinkat|rename|renameat2?|rmdir)\((?:[A-Z_]+, )?"([^"]*)"', line)
        if changed:
            writes.append(changed.group(1))
    outside = sorted({w for w in writes if w.startswith("/") and not (w == data or w.startswith(data + "/") or w == "/dev/null")})
    if outside:
        problem(f"writes outside the working directory, which ProtectSystem=strict refuses: {outside}")
    home = re.search(r'"(/root|/home|/run/user)(/[^"]*)?"', text)
    if home:
        problem(f"a path under /root, /home or /run/user, which ProtectHome= hides: {home.group(0)}")
    print(f"writes: {len(writes)}, all in the working directory" if not outside else f"writes: {len(writes)}")


def failed_start(signet, scratch):
    """A start that cannot reach its database: STATUS= says so, without the password; no READY=1."""
    listener, path = notify_socket(None, f"signet-systemd-check-{os.getpid()}")
    command = [signet, "serve", "--listen", f"127.0.0.1:{free_port()}", "--database", "postgres://signet:s3cret-pw@127.0.0.1:1/none"]
    done = subprocess.run(command, cwd=scratch, env=dict(os.environ, NOTIFY_SOCKET=path), capture_output=True, text=True, timeout=60)
    said = receive(listener, 5)
    listener.close()
    if done.returncode != 1 or not said or "READY" in said or not said.get("STATUS", "").startswith("cannot start: "):
        problem(f"a failed start: exit {done.returncode}, notified {said}")
    elif "s3cret-pw" in said["STATUS"]:
        problem(f"a failed start's STATUS= shows the database password: {said}")
    else:
        print(f"a failed start: exit 1, {said['STATUS'][:100]}")


def start(command, cwd, environment, scratch, name):
    """signet serve with its standard error in a file (`scratch`/`name`): a pipe read only at the
    end would fill with the access log, and the lines past its bound would be lost."""
    errors = open(os.path.join(scratch, name), "w")
    with errors:
        return subprocess.Popen(command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=errors)


def stop(server, scratch, name):
    """SIGTERM, the exit, and what it said on standard error."""
    server.terminate()
    server.wait(timeout=60)
    with open(os.path.join(scratch, name)) as f:
        return f.read()


def cleanup(server, listener):
    """After a run, however it ended: the server gone, the notification socket closed."""
    if server.poll() is None:
        server.kill()
        server.wait()
    listener.close()


def watchdog_elsewhere(signet, scratch):
    """A watchdog for another process (WATCHDOG_PID), or with a WATCHDOG_USEC that is not a
    number: READY=1, but no WATCHDOG=1 in ten of its would-be intervals."""
    for name, extra in (("another process's", {"WATCHDOG_PID": "1"}), ("a malformed", {"WATCHDOG_USEC": "soon"})):
        listener, path = notify_socket(None, f"signet-systemd-watchdog-{os.getpid()}")
        environment = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="100000")
        environment.update(extra)
        command = [signet, "serve", "--listen", f"127.0.0.1:{free_port()}", "--database", f"sqlite:{scratch}/watchdog.db"]
        server = start(command, scratch, environment, scratch, "elsewhere.stderr")
        try:
            ready = receive(listener, 60)
            collector = Collector(listener)
            time.sleep(1.0)
            fed = [said for _, said in collector.stop() if "WATCHDOG" in said]
            errors = stop(server, scratch, "elsewhere.stderr")
        finally:
            cleanup(server, listener)
        complaint = errors.count("WATCHDOG_USEC=soon is not a number of microseconds")
        if not ready or ready.get("READY") != "1" or fed or complaint != (1 if "WATCHDOG_PID" not in extra else 0):
            problem(f"{name} watchdog: READY {ready}, fed {len(fed)} times, said {complaint} times: {errors[-400:]}")
        else:
            print(f"{name} watchdog: not fed" + (", said once on standard error" if complaint else ""))


def watchdog_stall(signet, scratch):
    """A real stall: the database's write lock held by another process while a request that
    writes waits for it (SQLite's busy timeout, 5 s), so its worker stays inside that request."""
    interval, held = 1.0, 2.5
    listener, path = notify_socket(None, f"signet-systemd-stall-{os.getpid()}")
    port = free_port()
    database = os.path.join(scratch, "stall.db")
    environment = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC=str(int(interval * 1e6)))
    command = [signet, "serve", "--listen", f"127.0.0.1:{port}", "--database", f"sqlite:{database}"]
    server = start(command, scratch, environment, scratch, "stall.stderr")
    answers = []
    try:
        ready = receive(listener, 60)
        collector = Collector(listener)
        time.sleep(interval)
        lock = sqlite3.connect(database, isolation_level=None, timeout=10)
        lock.execute("BEGIN EXCLUSIVE")
        locked = time.monotonic()

        waiting = threading.Thread(target=lambda: answers.append(answer(port, "/passwordless/start", email_code("ada@example.com"))[0]))
        waiting.start()
        time.sleep(held)
        lock.execute("ROLLBACK")
        lock.close()
        unlocked = time.monotonic()
        waiting.join()
        time.sleep(2 * interval)
        errors = stop(server, scratch, "stall.stderr")
        received = collector.stop()
    finally:
        cleanup(server, listener)
    stalled = [at for at, said in received if "has not come round" in said.get("STATUS", "")]
    # Past one interval after the lock, the stuck worker has missed every probe until the unlock.
    fed_while_stuck = [at for at, said in received if said.get("WATCHDOG") == "1" and locked + interval < at < unlocked]
    again = [at for at, said in received if said.get("WATCHDOG") == "1" and said.get("STATUS", "").startswith("listening on") and at > unlocked]
    if not ready or not stalled or fed_while_stuck or not again or answers != [200] or "has not come round" not in errors:
        problem(f"a stalled worker: STATUS= said so {len(stalled)} times, WATCHDOG=1 {len(fed_while_stuck)} times while it was stuck,"
                f" {len(again)} times with STATUS= back after; the request: {answers}; {errors[-400:]}")
    else:
        print(f"a worker stuck {held} s in a request: not fed, STATUS= {stalled[0] - locked:.1f} s after the lock; fed again {again[0] - unlocked:.1f} s after it was let go")


class Forwarder:
    """TCP from a port of its own to the database, which `cut` takes away (the listener closed,
    every connection through it dropped) and `restore` brings back on the same port."""

    def __init__(self, host, port):
        self.target = (host, port)
        self.sockets = []
        self.lock = threading.Lock()
        self.port = 0
        self.restore()

    def restore(self):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, args=(self.listener,), daemon=True).start()

    def accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                return
            upstream.settimeout(None)
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    @staticmethod
    def pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        # shutdown first: it wakes the thread in accept(), which would keep the port bound.
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.sockets = []


def email_code(email):
    """The body of `POST /passwordless/start` that sends a code to `email` (the dev client)."""
    return json.dumps({"client_id": "dev", "connection": "email", "email": email, "send": "code"}).encode()


def answer(port, path, body=None):
    """The status of one request and how long it took."""
    started = time.monotonic()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers={"Content-Type": "application/json"})
    try:
        status = urllib.request.urlopen(request, timeout=30).status
    except urllib.error.HTTPError as error:
        status = f"{error.code} {json.loads(error.read()).get('reason')}"
    except OSError as error:
        status = str(error)
    return status, time.monotonic() - started


def watchdog_database_down(signet, scratch, database):
    """PostgreSQL gone while the server runs: requests fail at once, the workers keep turning, the
    watchdog stays fed; back, and requests pass again."""
    interval = 1.0
    url = urllib.parse.urlsplit(database)
    forwarder = Forwarder(url.hostname, url.port or 5432)
    # The same URL through the forwarder (whether or not it named a port).
    user = url.netloc.rpartition("@")[0]
    through = url._replace(netloc=(user + "@" if user else "") + f"127.0.0.1:{forwarder.port}").geturl()
    listener, path = notify_socket(None, f"signet-systemd-down-{os.getpid()}")
    port = free_port()
    environment = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC=str(int(interval * 1e6)))
    # In the first run's directory: its key-encryption key seals the database's signing keys.
    server = start([signet, "serve", "--listen", f"127.0.0.1:{port}", "--database", through], os.path.join(scratch, "data"), environment, scratch, "down.stderr")
    # A new address each time: a code to one address is not sent again within 30 s.
    addresses = iter(range(1_000_000))

    def sign_in():
        return email_code(f"ada+{next(addresses)}@example.com")

    try:
        ready = receive(listener, 60)
        collector = Collector(listener)
        before = answer(port, "/passwordless/start", sign_in())
        forwarder.cut()
        cut = time.monotonic()
        down = []
        # A few a second: /passwordless/start allows 50 an hour from one address, failed or not.
        while time.monotonic() < cut + 3 * interval:
            down.append(answer(port, "/passwordless/start", sign_in()))
            time.sleep(0.2)
        healthz = answer(port, "/healthz")
        back = time.monotonic()
        forwarder.restore()
        after = None
        while time.monotonic() < back + 10 and (after is None or after[0] != 200):
            after = answer(port, "/passwordless/start", sign_in())
            time.sleep(0.2)
        errors = stop(server, scratch, "down.stderr")
        received = collector.stop()
    finally:
        cleanup(server, listener)
        forwarder.cut()
    fed = [at for at, said in received if said.get("WATCHDOG") == "1" and cut <= at <= back]
    marks = [cut] + fed + [back]
    gap = max(b - a for a, b in zip(marks, marks[1:]))
    statuses = sorted({status for status, _ in down})
    slowest = max(seconds for _, seconds in down)
    if (not ready or before[0] != 200 or statuses != ["503 database_unavailable"] or slowest > 2.5 or healthz[0] != "503 database_unavailable"
            or gap >= interval or after is None or after[0] != 200):
        problem(f"the database gone: before {before}, while gone {statuses} (slowest {slowest:.2f} s), /healthz {healthz},"
                f" WATCHDOG=1 at most {gap:.2f} s apart ({len(fed)} times), back {after}; {errors[-400:]}")
    else:
        print(f"PostgreSQL gone {back - cut:.1f} s: {len(down)} requests 503 database_unavailable (slowest {slowest:.2f} s),"
              f" WATCHDOG=1 {len(fed)} times, at most {gap:.2f} s apart; back: 200 after {after[1]:.2f} s")


def report():
    for text in problems:
        print(f"systemd-check: {text}", file=sys.stderr)
    sys.exit(1 if problems else 0)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--trace":
        # The trace rules alone, over a trace written elsewhere (the tests' made-up one).
        with open(UNIT) as unit, open(sys.argv[2]) as trace:
            check_trace(unit.read(), trace.read(), sys.argv[3])
        report()
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    signet = os.path.abspath(sys.argv[1])
    database = sys.argv[2] if len(sys.argv) == 3 else None
    for tool in ("systemd-analyze", "strace"):
        if not shutil.which(tool):
            sys.exit(f"systemd-check: {tool} is missing (scripts/bootstrap.sh test installs it)")
    scratch = tempfile.mkdtemp(prefix="signet-systemd-")
    try:
        unit = check_unit(signet, scratch)
        text, data = serve(signet, database, scratch)
        if text is not None:
            check_trace(unit, text, data)
        failed_start(signet, scratch)
        # Both on SQLite whatever DATABASE_URL says: nothing in them depends on the database.
        if WATCHDOG and database is None:
            watchdog_elsewhere(signet, scratch)
            watchdog_stall(signet, scratch)
        if WATCHDOG and database is not None:
            watchdog_database_down(signet, scratch, database)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report()


if __name__ == "__main__":
    main()
