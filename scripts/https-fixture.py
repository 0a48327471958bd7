#!/usr/bin/env python3
"""A static HTTPS server for the tests of `signet doctor`.

usage: https-fixture.py CERT.pem KEY.pem ROUTES.json
Listens on 127.0.0.1 on a free port and prints the port on its first line of output. ROUTES
maps "HOST PATH" (the Host header without its port) to {"status", "headers", "body"}; anything
else is a 404.
"""
import http.server
import json
import ssl
import sys


def main():
    cert, key, routes_file = sys.argv[1:4]
    with open(routes_file) as f:
        routes = json.load(f)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            host = (self.headers.get("Host") or "").split(":")[0].lower()
            route = routes.get(host + " " + self.path.split("?")[0])
            if route is None:
                route = {"status": 404, "headers": {"Content-Type": "text/plain"}, "body": "not found"}
            body = route.get("body", "").encode()
            self.send_response(route.get("status", 200))
            for name, value in route.get("headers", {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
