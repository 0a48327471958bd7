#!/usr/bin/env python3
"""signet serve under systemd's socket activation (sd_listen_fds(3)), this script playing the
service manager: it binds the listening socket, starts `signet serve` with it as descriptor 3
(LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES), stops the server and starts another on the same
socket. First the shipped deploy/systemd/signet.socket must verify beside signet.service
(systemd-analyze verify) with one ListenStream= and Accept=no. Connections made while no server runs must wait in the socket's backlog and be answered
by the next one; a server that stops must leave the socket listening. Then the refusals: more
than one socket, a count that is not a number, a descriptor that is not a listening TCP socket;
and variables meant for another process are ignored. Run by SocketActivationTests.

Usage: socket-activation-check.py SIGNET_BINARY
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

DEADLINE = 30.0
# Every server started, so that a failed check leaves none running.
STARTED = []
UNITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "systemd")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def kill_started():
    for server in STARTED:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


class Server:
    """One `signet serve`, with `passed` (a socket, or None) as descriptor 3."""

    def __init__(self, binary, directory, name, passed, count="1", for_us=True):
        self.log_path = os.path.join(directory, name + ".log")
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("LISTEN_", "NOTIFY_SOCKET", "WATCHDOG_", "SIGNET_"))}
        environment.update({"LISTEN_FDS": count, "LISTEN_FDNAMES": "http"})
        # LISTEN_PID must name the server itself: the shell's own PID, which exec keeps.
        command = ('LISTEN_PID=$$ exec "$0" "$@"' if for_us else 'LISTEN_PID=1 exec "$0" "$@"')
        arguments = ["/bin/sh", "-c", command, binary, "serve", "--listen", "127.0.0.1:0",
                     "--database", "sqlite:" + os.path.join(directory, "signet.db")]
        place = None
        if passed is not None:
            fd = passed.fileno()
            def place():
                os.dup2(fd, 3)  # dup2 leaves descriptor 3 open across exec
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(arguments, env=environment, cwd=directory, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            pass_fds=[3] if passed is not None else [], preexec_fn=place)
        STARTED.append(self)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_listening(self):
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if "signet: listening on " in self.log():
                return
            if self.process.poll() is not None:
                fail("the server exited %s before listening:\n%s" % (self.process.returncode, self.log()))
            time.sleep(0.05)
        fail("the server did not listen within %d s:\n%s" % (DEADLINE, self.log()))

    def stop(self):
        self.process.terminate()
        try:
            return self.process.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            fail("the server did not stop within %d s of SIGTERM:\n%s" % (DEADLINE, self.log()))

    def exit_status(self):
        try:
            return self.process.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            fail("the server neither listened nor exited:\n%s" % self.log())


def send(family, address):
    """A connection with a request for /healthz written; the connect is what must not fail."""
    c = socket.socket(family, socket.SOCK_STREAM)
    c.settimeout(DEADLINE)
    try:
        c.connect(address)
    except OSError as e:
        fail("connect to %s refused while the socket is the service manager's: %s" % (address, e))
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: signet.test\r\nConnection: close\r\n\r\n")
    return c


def read_all(c):
    """Everything the server sends until it closes; the connection is then closed."""
    data = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    c.close()
    return data


def status(c):
    line = read_all(c).split(b"\r\n", 1)[0].decode("latin-1")
    return int(line.split(" ")[1]) if line.startswith("HTTP/1.1 ") else None


def discovery_issuer(port):
    """The issuer of the OpenID configuration the server at `port` publishes."""
    c = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    c.sendall(b"GET /.well-known/openid-configuration HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    head, _, body = read_all(c).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        fail("the discovery document was not served: %r" % head[:80])
    return json.loads(body).get("issuer")


def listening_socket(family=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # systemd's BindIPv6Only=both
    s.bind((host, 0))
    s.listen(128)
    return s


def check_unit(binary, directory):
    """signet.socket beside signet.service, each copied with ExecStart= pointed at `binary`."""
    with open(os.path.join(UNITS, "signet.socket")) as f:
        socket_unit = f.read()
    streams = re.findall(r"^ListenStream=(.*)$", socket_unit, re.M)
    accept = re.findall(r"^Accept=(.*)$", socket_unit, re.M)
    if len(streams) != 1 or accept not in ([], ["no"]) or re.search(r"^(ListenDatagram|ListenSequentialPacket|Service)=", socket_unit, re.M):
        fail("signet.socket must have one ListenStream=, Accept=no and no Service= (signet serve takes one socket): %s %s" % (streams, accept))
    with open(os.path.join(UNITS, "signet.service")) as f:
        service_unit = f.read().replace("/usr/local/bin/signet", binary)
    for name, text in (("signet.socket", socket_unit), ("signet.service", service_unit)):
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)
    verify = subprocess.run(["systemd-analyze", "verify", os.path.join(directory, "signet.socket"), os.path.join(directory, "signet.service")],
                            capture_output=True, text=True)
    said = (verify.stdout + verify.stderr).strip()
    if verify.returncode != 0 or said:
        fail("systemd-analyze verify signet.socket signet.service: exit %d: %s" % (verify.returncode, said))
    print("signet.socket verifies beside signet.service: ListenStream=%s, one process accepts" % streams[0])


def restart(binary, directory):
    passed = listening_socket()
    port = passed.getsockname()[1]
    first = Server(binary, directory, "first", passed)
    first.wait_listening()
    said = first.log()
    if "listening on http://127.0.0.1:%d " % port not in said or "on the socket the service manager passed" not in said:
        fail("the first server does not say it listens on the passed socket (port %d):\n%s" % (port, said))
    if status(send(socket.AF_INET, ("127.0.0.1", port))) != 200:
        fail("the first server did not answer 200")
    # Development mode's origin and issuer follow the socket's port, not --listen's.
    if "origin http://localhost:%d," % port not in said:
        fail("the development origin is not the passed socket's port %d:\n%s" % (port, said))
    issuer = discovery_issuer(port)
    if issuer != "http://localhost:%d" % port:
        fail("the discovery document's issuer is %r, not http://localhost:%d" % (issuer, port))
    print("first: listening on the passed socket, port %d, answers 200; origin and issuer http://localhost:%d" % (port, port))
    code = first.stop()
    if code != 0:
        fail("the first server exited %s on SIGTERM:\n%s" % (code, first.log()))
    print("first: exit 0 on SIGTERM")

    # No server runs: the socket, still listening, takes the connections into its backlog.
    waiting = [send(socket.AF_INET, ("127.0.0.1", port)) for _ in range(5)]
    print("no server running: 5 connections taken by the socket's backlog")
    time.sleep(0.3)
    second = Server(binary, directory, "second", passed)
    second.wait_listening()
    answers = [status(c) for c in waiting]
    if answers != [200] * 5:
        fail("the requests that waited were answered %s:\n%s" % (answers, second.log()))
    code = second.stop()
    if code != 0:
        fail("the second server exited %s on SIGTERM:\n%s" % (code, second.log()))
    # The access log is written off the workers; a stop writes what is left.
    served = second.log().count('"path":"/healthz"')
    if served != 5:
        fail("the second server's access log has %d requests for /healthz, not 5:\n%s" % (served, second.log()))
    print("second: answered the 5 requests that waited, 200 each")
    c = send(socket.AF_INET, ("127.0.0.1", port))
    c.close()
    print("second: exit 0 on SIGTERM; the socket still listens")
    passed.close()


def dual_stack(binary, directory):
    try:
        passed = listening_socket(socket.AF_INET6, "::")
    except OSError as e:
        print("IPv6: not available here (%s); the dual-stack run is left out" % e)
        return
    port = passed.getsockname()[1]
    server = Server(binary, directory, "ipv6", passed)
    server.wait_listening()
    if "listening on http://[::]:%d " % port not in server.log():
        fail("the IPv6 server does not say http://[::]:%d:\n%s" % (port, server.log()))
    answers = [status(send(socket.AF_INET, ("127.0.0.1", port))), status(send(socket.AF_INET6, ("::1", port)))]
    if answers != [200, 200]:
        fail("over the dual-stack socket: %s" % answers)
    if server.stop() != 0:
        fail("the IPv6 server did not exit 0")
    print("a dual-stack IPv6 socket ([::]:%d, as ListenStream=PORT makes): 200 over IPv4 and IPv6" % port)
    passed.close()


def refusals(binary, directory):
    passed = listening_socket()
    for count, said in (("2", "signet serve listens on one socket"), ("x", "LISTEN_FDS=x")):
        server = Server(binary, directory, "count-" + count, passed, count=count)
        code = server.exit_status()
        if code != 1 or said not in server.log():
            fail("LISTEN_FDS=%s: exit %s, expected 1 with %r:\n%s" % (count, code, said, server.log()))
    print("LISTEN_FDS=2 or x: exit 1, said why")
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    idle = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    idle.bind(("127.0.0.1", 0))
    for name, wrong in (("udp", udp), ("unlistened", idle)):
        server = Server(binary, directory, name, wrong)
        code = server.exit_status()
        if code != 1 or "is not a listening TCP socket of IPv4 or IPv6" not in server.log():
            fail("a %s socket as descriptor 3: exit %s:\n%s" % (name, code, server.log()))
    print("a UDP socket, or a TCP socket not listening, as descriptor 3: exit 1, said why")
    # Variables meant for another process: the server binds its own --listen address.
    server = Server(binary, directory, "elsewhere", passed, for_us=False)
    server.wait_listening()
    said = server.log()
    if "on the socket the service manager passed" in said or "listening on http://127.0.0.1:%d " % passed.getsockname()[1] in said:
        fail("LISTEN_PID of another process, yet the passed socket was taken:\n%s" % said)
    if server.stop() != 0:
        fail("the server with another process's LISTEN_PID did not exit 0")
    print("LISTEN_PID of another process: ignored, its own --listen address bound")
    for s in (passed, udp, idle):
        s.close()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="signet-socket-") as directory:
        try:
            check_unit(binary, directory)
            restart(binary, directory)
            dual_stack(binary, directory)
            refusals(binary, directory)
        finally:
            kill_started()  # a failed check leaves no server running
    print("ok")


if __name__ == "__main__":
    main()
