#!/usr/bin/env python3
"""Authlib as a machine client that authenticates with private_key_jwt (OIDC Core section 9)
against a running Signet: discovery, a client_credentials token, a Management API call with it,
introspection of the token with an assertion for the introspection endpoint, and an assertion
sent twice.

usage: private-key-jwt-check.py ISSUER CLIENT_ID PRIVATE_KEY.pem ALG
Prints one line, `report {...}`, with what it saw; `failed` names the first step that broke.
"""
import json
import sys

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from authlib.oauth2.rfc7523.assertion import private_key_jwt_sign
from joserfc.jwk import import_key

issuer, client_id, key_path, alg = sys.argv[1:5]
with open(key_path) as f:
    # A key object: given PEM text, Authlib's PrivateKeyJWT reads it as RSA.
    private_key = import_key(f.read())
report = {}
step = "discovery"
try:
    discovery = requests.get(issuer + "/.well-known/openid-configuration", timeout=10).json()
    report["methods"] = discovery["token_endpoint_auth_methods_supported"]
    report["algorithms"] = discovery["token_endpoint_auth_signing_alg_values_supported"]
    token_endpoint = discovery["token_endpoint"]

    step = "client_credentials"
    session = OAuth2Session(client_id, private_key, scope="read:users",
                            token_endpoint_auth_method=PrivateKeyJWT(token_endpoint, alg=alg))
    token = session.fetch_token(token_endpoint, grant_type="client_credentials")
    report["token_type"] = token["token_type"]
    report["scope"] = token.get("scope")

    step = "management"
    users = requests.get(issuer + "/api/v2/users", headers={"Authorization": "Bearer " + token["access_token"]}, timeout=10)
    report["users_status"] = users.status_code

    step = "introspection"
    # No endpoint given: Authlib names the URL it posts to as the audience.
    introspector = OAuth2Session(client_id, private_key, token_endpoint_auth_method=PrivateKeyJWT(alg=alg))
    answer = introspector.introspect_token(discovery["introspection_endpoint"], token=token["access_token"]).json()
    report["introspection_active"] = answer.get("active")
    report["introspection_client"] = answer.get("client_id")

    step = "replay"
    assertion = private_key_jwt_sign(private_key, client_id=client_id, token_endpoint=token_endpoint, alg=alg)
    form = {"grant_type": "client_credentials", "client_id": client_id,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "client_assertion": assertion}
    first = requests.post(token_endpoint, data=form, timeout=10)
    second = requests.post(token_endpoint, data=form, timeout=10)
    report["first_status"] = first.status_code
    report["second_status"] = second.status_code
    report["second_reason"] = second.json().get("reason")
    report["second_error"] = second.json().get("error")
except Exception as error:  # the report says which step broke, and how
    report["failed"] = f"{step}: {type(error).__name__}: {error}"
print("report " + json.dumps(report), flush=True)
