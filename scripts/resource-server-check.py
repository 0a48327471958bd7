#!/usr/bin/env python3
"""An API's check of a Signet access token, written with PyJWT alone, for the tests.

usage: resource-server-check.py JWKS_URL ISSUER AUDIENCE PERMISSION TOKEN...
For each token: its signature against the JWKS, its typ (at+jwt, RFC 9068), iss, aud and exp,
then whether its permissions claim holds PERMISSION ("allowed"), and whether its scope does
("scope_allowed", as an API that checks scope does). Prints one JSON object per token, a line
each: {"valid": bool, "error": str|null, "permissions": [...]|null, "allowed": bool,
"scope_allowed": bool}.
"""
import json
import sys

import jwt


def check(client, issuer, audience, permission, token):
    try:
        if jwt.get_unverified_header(token).get("typ") != "at+jwt":
            raise jwt.InvalidTokenError("not an access token (typ is not at+jwt)")
        key = client.get_signing_key_from_jwt(token).key
        claims = jwt.decode(token, key, algorithms=["ES256", "EdDSA", "RS256"], audience=audience, issuer=issuer,
                            options={"require": ["exp", "iat", "iss", "aud", "sub"]})
    except jwt.PyJWTError as error:
        return {"valid": False, "error": type(error).__name__, "permissions": None, "allowed": False, "scope_allowed": False}
    permissions = claims.get("permissions")
    allowed = isinstance(permissions, list) and permission in permissions
    scope = claims.get("scope")
    scope_allowed = isinstance(scope, str) and permission in scope.split(" ")
    return {"valid": True, "error": None, "permissions": permissions, "allowed": allowed, "scope_allowed": scope_allowed}


def main():
    if len(sys.argv) < 6:
        print(__doc__, file=sys.stderr)
        return 2
    jwks_url, issuer, audience, permission = sys.argv[1:5]
    client = jwt.PyJWKClient(jwks_url)
    for token in sys.argv[5:]:
        print(json.dumps(check(client, issuer, audience, permission, token), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
