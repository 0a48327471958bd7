#!/usr/bin/python3
"""A real SMTP server for Signet's tests (Debian's python3-aiosmtpd), on loopback.

Every message it accepts is stored whole in a Maildir (DIR/new/...), with the envelope
recipients in an X-Envelope-To header and the MAIL command's parameters (SMTPUTF8, RFC 6531;
SIZE) in X-Mail-Options, so a test reads exactly what Signet sent.

  smtp-server.py --port PORT --maildir DIR [--starttls CERT KEY] [--tls CERT KEY]
                 [--auth USER:PASSWORD] [--reject-first N]

--starttls offers STARTTLS and requires it before MAIL; --tls speaks TLS from the first byte
(smtps); --auth requires AUTH PLAIN/LOGIN with these credentials; --reject-first answers the
first N messages with a 451 (a relay's temporary failure). --port 0 takes a free port.
Prints "ready PORT" once listening, or "in-use" (exit 3) when the port is taken.
"""
import argparse
import errno
import mailbox
import socket
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Store:
    def __init__(self, maildir, reject_first):
        self.box = mailbox.Maildir(maildir, create=True)
        self.rejects_left = reject_first

    async def handle_DATA(self, server, session, envelope):
        if self.rejects_left > 0:
            self.rejects_left -= 1
            return "451 4.3.0 try again later"
        content = envelope.original_content or envelope.content
        if isinstance(content, str):
            content = content.encode()
        header = ("X-Envelope-To: " + ", ".join(envelope.rcpt_tos) + "\r\n"
                  + "X-Mail-Options: " + " ".join(envelope.mail_options) + "\r\n").encode()
        self.box.add(header + content)
        return "250 2.0.0 stored"


class BoundController(Controller):
    """A Controller on a socket bound before it starts: the port is known (or taken) at once,
    and --port 0 needs no second guess at a free port, which another process could take."""

    def __init__(self, handler, sock, **kwargs):
        self.sock = sock
        super().__init__(handler, hostname="127.0.0.1", port=sock.getsockname()[1], **kwargs)

    def _create_server(self):
        return self.loop.create_server(self._factory_invoker, sock=self.sock, ssl=self.ssl_context)


def bind(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A restart on the same port must not wait out the old connections' TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(100)
    return sock


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--maildir", required=True)
    p.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--auth")
    p.add_argument("--reject-first", type=int, default=0)
    a = p.parse_args()

    try:
        sock = bind(a.port)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        print("in-use", flush=True)
        return 3
    # A busy machine (the whole suite on two cores) can take more than aiosmtpd's 5 s.
    kwargs = {"ready_timeout": 60.0}
    if a.starttls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*a.starttls)
        kwargs["tls_context"] = context
        kwargs["require_starttls"] = True
    if a.tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*a.tls)
        kwargs["ssl_context"] = context
    if a.auth:
        user, password = a.auth.split(":", 1)

        def authenticator(server, session, envelope, mechanism, data):
            ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
            return AuthResult(success=ok)

        kwargs["authenticator"] = authenticator
        kwargs["auth_required"] = True
        # With STARTTLS, AUTH only after it. (aiosmtpd knows TLS only from STARTTLS: over
        # implicit TLS the connection is encrypted from the first byte, so AUTH is allowed.)
        kwargs["auth_require_tls"] = bool(a.starttls)
    controller = BoundController(Store(a.maildir, a.reject_first), sock, **kwargs)
    controller.start()
    print("ready", sock.getsockname()[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    sys.exit(main())
