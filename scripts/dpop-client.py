#!/usr/bin/env python3
"""An independent DPoP client (RFC 9449) for the tests: PyJWT and cryptography, nothing of Signet's.

usage: dpop-client.py BASE_URL ISSUER CLIENT_ID EMAIL CODE
Signs in by email code with a DPoP proof, calls /userinfo with and without proofs, refreshes,
and prints what each step answered as one JSON object.
"""
import base64
import hashlib
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import jwt
from cryptography.hazmat.primitives.asymmetric import ec


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Key:
    def __init__(self):
        self.private = ec.generate_private_key(ec.SECP256R1())
        numbers = self.private.public_key().public_numbers()
        self.jwk = {"crv": "P-256", "kty": "EC", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        canonical = json.dumps(self.jwk, separators=(",", ":"), sort_keys=True)
        self.thumbprint = b64(hashlib.sha256(canonical.encode()).digest())

    def proof(self, method, url, access_token=None, jti=None):
        claims = {"htm": method, "htu": url, "iat": int(time.time()), "jti": jti or str(uuid.uuid4())}
        if access_token:
            claims["ath"] = b64(hashlib.sha256(access_token.encode()).digest())
        return jwt.encode(claims, self.private, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self.jwk})


def request(method, url, form=None, headers=None):
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(req) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def main():
    base, issuer, client_id, email, code = sys.argv[1:6]
    key, other = Key(), Key()
    report = {}
    status, tokens = request("POST", base + "/oauth/token", {
        "grant_type": "http://auth0.com/oauth/grant-type/passwordless/otp", "client_id": client_id, "username": email, "otp": code,
        "realm": "email", "scope": "openid email offline_access"}, {"DPoP": key.proof("POST", issuer + "/oauth/token")})
    report["grant"] = status
    access = tokens.get("access_token", "")
    report["token_type"] = tokens.get("token_type")
    claims = jwt.decode(access, options={"verify_signature": False}) if access else {}
    report["cnf_matches"] = claims.get("cnf", {}).get("jkt") == key.thumbprint
    userinfo = issuer + "/userinfo"
    report["userinfo_dpop"], _ = request("GET", base + "/userinfo", headers={"Authorization": "DPoP " + access, "DPoP": key.proof("GET", userinfo, access)})
    report["userinfo_bearer"], _ = request("GET", base + "/userinfo", headers={"Authorization": "Bearer " + access})
    _, answer = request("GET", base + "/userinfo", headers={"Authorization": "DPoP " + access, "DPoP": other.proof("GET", userinfo, access)})
    report["userinfo_other_key"] = answer.get("reason")
    replayed = key.proof("GET", userinfo, access)
    request("GET", base + "/userinfo", headers={"Authorization": "DPoP " + access, "DPoP": replayed})
    _, answer = request("GET", base + "/userinfo", headers={"Authorization": "DPoP " + access, "DPoP": replayed})
    report["userinfo_replayed"] = answer.get("reason")
    refresh = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": tokens.get("refresh_token", "")}
    _, answer = request("POST", base + "/oauth/token", refresh)
    report["refresh_without_proof"] = answer.get("reason")
    report["refresh_with_proof"], _ = request("POST", base + "/oauth/token", refresh, {"DPoP": key.proof("POST", issuer + "/oauth/token")})
    print(json.dumps(report))
    ok = report["grant"] == 200 and report["refresh_with_proof"] == 200
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
