#!/usr/bin/env python3
"""A log stream's endpoint that checks each POST with the `standardwebhooks` library (the
scheme's own Python implementation, not written with Signet), for the tests.

usage: log-stream-endpoint.py SECRETS_FILE RESULTS_FILE PORT   (prints `ready` once it listens)
SECRETS_FILE holds the secrets it accepts (`whsec_...`), one a line, read again for each POST,
so a test can change them between POSTs. Each POST is answered 204 when one of them verifies it,
else 401, and appends a JSON line to RESULTS_FILE:
  verified   the indexes (in SECRETS_FILE) of the secrets that verify it
  error      the library's complaint, when none does
  id, timestamp, signatures, items: what came
  refused    for a verified POST, each alteration the library refused: the body, the ID, the
             timestamp (a second off, and ten minutes old) and the signature made under another
             secret; each must be true
"""
import base64
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

secrets_file, results_file, port = sys.argv[1], sys.argv[2], int(sys.argv[3])


def refused(secret, body, headers):
    try:
        Webhook(secret).verify(body, headers)
        return False
    except WebhookVerificationError:
        return True


class Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k: v for k, v in self.headers.items()}
        with open(secrets_file) as f:
            secrets = [line.strip() for line in f if line.strip()]
        result = {"id": headers.get("webhook-id"), "timestamp": headers.get("webhook-timestamp"),
                  "signatures": len((headers.get("webhook-signature") or "").split()), "verified": []}
        for index, secret in enumerate(secrets):
            try:
                items = Webhook(secret).verify(body, headers)
                result["verified"].append(index)
                result["items"] = len(items) if isinstance(items, list) else 1
            except WebhookVerificationError as error:
                result["error"] = str(error)
        if result["verified"]:
            secret = secrets[result["verified"][0]]
            timestamp = int(headers["webhook-timestamp"])
            other = "whsec_" + base64.b64encode(os.urandom(32)).decode()
            result["refused"] = {
                "body": refused(secret, body + b" ", headers),
                "id": refused(secret, body, {**headers, "webhook-id": headers["webhook-id"] + "x"}),
                "timestamp": refused(secret, body, {**headers, "webhook-timestamp": str(timestamp + 1)}),
                "old": refused(secret, body, {**headers, "webhook-timestamp": str(timestamp - 600)}),
                "secret": refused(other, body, headers),
            }
        with open(results_file, "a") as f:
            f.write(json.dumps(result) + "\n")
        self.send_response(204 if result["verified"] else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", port), Endpoint)
print("ready", flush=True)
server.serve_forever()
