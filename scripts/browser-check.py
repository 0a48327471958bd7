#!/usr/bin/env python3
"""Signet's hosted pages and OIDC code flow, driven for real: headless Chromium (Debian's
chromium and chromium-driver, through Selenium) with its WebAuthn virtual authenticator, and
Authlib as the relying party's OIDC client. Run by the Swift test WebBrowserTests against a
running Signet; it can be run by hand the same way.

  SIGNET_RS_SECRET=... browser-check.py BASE_URL MAILDIR SCREENSHOT_DIR CLIENT_ID CALLBACK_URL API RS_ID

BASE_URL is Signet's issuer (http://localhost:PORT: WebAuthn needs the name localhost);
MAILDIR is the test SMTP server's Maildir (scripts/smtp-server.py); CALLBACK_URL a loopback
redirect URI registered for the public client CLIENT_ID (nothing listens there: the code is
read from the address bar; the script answers there with a blank page). API is an audience
the client may ask tokens for, and RS_ID the confidential client of its resource server, whose
secret comes in the environment (not on the command line, where `ps` shows it). To move Signet's clock, the script writes `advance SECONDS` on
standard output and waits for a line on standard input. Its last line is
`report {JSON}`: each check's outcome, which the Swift test asserts one by one.
"""
import base64
import functools
import http.server
import importlib.util
import json
import mailbox
import os
import quopri
import re
import secrets
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import WebDriverWait

BASE, MAILDIR, SHOTS, CLIENT, CALLBACK, API, RS_ID = sys.argv[1:8]
RS_SECRET = os.environ["SIGNET_RS_SECRET"]
report = {}


logout_tokens = []  # what the back-channel logout URI was sent, each verified as it came


class Callback(http.server.BaseHTTPRequestHandler):
    """The relying party's redirect URI: a blank page; the code is read from the address bar.
    And its back-channel logout URI (OpenID Connect Back-Channel Logout 1.0 §2.5-2.8): each
    logout token verified by Authlib against the JWKS as a relying party would, 200 if good."""

    def do_POST(self):
        form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()))
        try:
            claims = jwt.decode(form["logout_token"], jwks, claims_options={
                "iss": {"essential": True, "value": discovery["issuer"]}, "aud": {"essential": True, "value": CLIENT}})
            claims.validate(now=int(time.time()) + clock_offset)
            logout_tokens.append({"path": self.path, "typ": claims.header.get("typ"), "sub": claims.get("sub"), "sid": claims.get("sid"),
                                  "event": claims.get("events") == {"http://schemas.openid.net/event/backchannel-logout": {}},
                                  "nonce": claims.get("nonce"), "lifetime": claims.get("exp", 0) - claims.get("iat", 0), "jti": bool(claims.get("jti"))})
            self.send_response(200)
        except Exception as error:
            logout_tokens.append({"failed": f"{type(error).__name__}: {error}"})
            self.send_response(400)
        self.end_headers()

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>callback</title>")

    def log_message(self, *args):
        pass


callback = urllib.parse.urlsplit(CALLBACK)
threading.Thread(target=http.server.HTTPServer((callback.hostname, callback.port), Callback).serve_forever, daemon=True).start()
os.makedirs(SHOTS, exist_ok=True)
discovery = requests.get(BASE + "/.well-known/openid-configuration", timeout=10).json()
jwks = JsonWebKey.import_key_set(requests.get(discovery["jwks_uri"], timeout=10).json())


clock_offset = 0


def give_role(address):
    """Asks the Swift test to give the account a role, as an operator would."""
    print(f"role {address}", flush=True)
    sys.stdin.readline()


def advance(seconds):
    """Asks the Swift test to move Signet's clock (and remembers it, to check token times)."""
    global clock_offset
    clock_offset += seconds
    print(f"advance {seconds}", flush=True)
    sys.stdin.readline()


# Records the page's Signal API calls (WebAuthn L3 §5.1.10) in window.__signals, before any
# script of the page runs.
SIGNAL_SPY = """
window.__signals = [];
if (window.PublicKeyCredential) {
  for (const name of ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"]) {
    const original = PublicKeyCredential[name];
    if (!original) continue;
    PublicKeyCredential[name] = function (options) { window.__signals.push([name, options]); return original.call(this, options); };
  }
}
"""


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en-US"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    add_authenticator(driver)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SIGNAL_SPY})
    return driver


def add_authenticator(driver, credentials=()):
    """A platform authenticator that verifies the user, holding `credentials` (exported from another)."""
    authenticator = VirtualAuthenticatorOptions()
    authenticator.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    authenticator.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
    authenticator.has_resident_key = True
    authenticator.has_user_verification = True
    authenticator.is_user_verified = True
    authenticator.is_user_consenting = True
    driver.add_virtual_authenticator(authenticator)
    for credential in credentials:
        driver.add_credential(credential)


def swap_authenticator(driver, credentials=()):
    """Replaces the authenticator with a new one holding `credentials`; returns the old one's."""
    old = driver.get_credentials()
    driver.remove_virtual_authenticator()
    add_authenticator(driver, credentials)
    return old


def by_test_id(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def replaced(error):
    """Whether `error` says the page changed under the call: an element of a document just
    left, which chromedriver reports as stale or, right after a navigation the page's script
    started, as a node that "does not belong to the document"."""
    if isinstance(error, (StaleElementReferenceException, NoSuchElementException)):
        return True
    return isinstance(error, WebDriverException) and "does not belong to the document" in str(error)


def wait_for(driver, condition, seconds=15):
    """`condition`'s first true answer; a page that changes under it is asked again."""
    def ask(d):
        try:
            return condition(d)
        except WebDriverException as error:
            if replaced(error):
                return False
            raise
    return WebDriverWait(driver, seconds, poll_frequency=0.1).until(ask)


def click(driver, locate, seconds=15):
    """Clicks the element `locate` finds, found again when the page changed under the click."""
    def attempt(d):
        element = locate(d)
        element.click()
        return element
    return wait_for(driver, attempt, seconds)


def sign_out(driver):
    """Presses the page's sign-out button and waits until the browser has left that page, so that
    what is asked next is asked of the page that follows, not of the one signed out of."""
    button = click(driver, lambda d: by_test_id(d, "signout"))
    WebDriverWait(driver, 15, poll_frequency=0.05).until(left(button))


def left(element):
    """A condition: the page that held `element` has been left (Selenium's `staleness_of`
    expects a stale element, but chromedriver may say so with the error `replaced` knows)."""
    def ask(_):
        try:
            element.is_enabled()
            return False
        except WebDriverException as error:
            if replaced(error):
                return True
            raise
    return ask


def signed_in_as(driver):
    """The account page's address, once the browser is on it."""
    return wait_for(driver, lambda d: d.current_url.startswith(BASE + "/account") and d.find_element(By.CSS_SELECTOR, "p.who").text)


@functools.cache
def axe_script():
    """axe-core's script, from the axe-playwright-python wheel, installed without its
    dependencies: only its script is used, injected into each page."""
    spec = importlib.util.find_spec("axe_playwright_python")
    if spec is None:
        raise RuntimeError("axe-core's script is missing: run scripts/bootstrap.sh test")
    with open(os.path.join(spec.submodule_search_locations[0], "axe.min.js"), encoding="utf-8") as f:
        return f.read()


def audit(driver, name):
    """axe-core's WCAG 2.0-2.2 A and AA rules and its best practices over the page as it is laid
    out now: each violation as page, rule, impact and the first elements."""
    driver.execute_script(axe_script())
    found = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice']}, resultTypes: ['violations']})
            .then(r => done(r.violations.map(v => [v.id, v.impact, v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')])))
            .catch(e => done([['axe-failed', 'critical', String(e)]]));
    """)
    listed = report.setdefault("accessibility", [])
    for rule, impact, where in found:
        line = f"{name}: {rule} ({impact}) {where}"
        if line not in listed:
            listed.append(line)


def shoot(driver, name):
    """The page at desktop width and at a phone's (390 CSS px), whole, each layout audited; and
    audited in the dark scheme."""
    for label, width, mobile in (("desktop", 1280, False), ("phone", 390, True)):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 844, "deviceScaleFactor": 1, "mobile": mobile})
        height = driver.execute_script("return Math.max(document.body.scrollHeight, 600)")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": min(height, 6000), "deviceScaleFactor": 1, "mobile": mobile})
        # Two frames after the resize, so the whole new height is painted, text and all.
        driver.execute_async_script("const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));")
        driver.save_screenshot(os.path.join(SHOTS, f"{name}-{label}.png"))
        audit(driver, name)
        overflow = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
        report.setdefault("horizontal_overflow", []).extend([f"{name}-{label}"] if overflow else [])
        # A date and time on more than one line box was broken at a hyphen or a space.
        broken = driver.execute_script("return Array.from(document.querySelectorAll('.when')).filter(e => e.getClientRects().length > 1).map(e => e.textContent)")
        report.setdefault("broken_dates", []).extend(f"{name}-{label}: {text}" for text in broken)
        report.setdefault("dates_seen", 0)
        report["dates_seen"] += driver.execute_script("return document.querySelectorAll('.when').length")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    # The dark scheme's colours too (prefers-color-scheme), audited at the window's width.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    driver.execute_async_script("const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));")
    audit(driver, f"{name} (dark)")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def code_for(address, after=0, seconds=15, kind="otp"):
    """The newest code of `kind` mailed to `address`, once more than `after` have arrived."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        box = mailbox.Maildir(MAILDIR, create=False)
        codes = []
        for key in sorted(box.keys(), key=lambda k: box.get_file(k).name if hasattr(box.get_file(k), "name") else k):
            message = box[key]
            if address not in message.get("X-Envelope-To", "") or message.get("X-Signet-Kind") != kind:
                continue
            body = message.get_payload(decode=True) or b""
            match = re.search(rb"\b(\d{6,10})\b", quopri.decodestring(body) if b"=" in body else body)
            if match:
                codes.append((message.get("Date"), match.group(1).decode()))
        if len(codes) > after:
            return codes[-1][1], len(codes)
        time.sleep(0.2)
    raise RuntimeError(f"no code mail reached {address}")


def new_client():
    # A public client: no secret, client_id in the body (RFC 6749 §2.3, "none").
    return OAuth2Session(CLIENT, redirect_uri=CALLBACK, scope="openid email profile offline_access", code_challenge_method="S256",
                         token_endpoint_auth_method="none")


def authorization_url(client, **extra):
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], code_verifier=verifier, nonce=nonce, **extra)
    return url, state, verifier, nonce


def landed(driver):
    """The code and state the browser was sent back with (nothing listens on the callback)."""
    wait_for(driver, lambda d: d.current_url.startswith(CALLBACK))
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))


def verify_id_token(token, nonce):
    claims = jwt.decode(token, jwks, claims_options={"iss": {"essential": True, "value": discovery["issuer"]}, "aud": {"essential": True, "value": CLIENT},
                                                     "nonce": {"essential": True, "value": nonce}})
    claims.validate(now=int(time.time()) + clock_offset)
    return claims


def token_error(response):
    body = response.json()
    return f"{response.status_code} {body.get('error')} {body.get('reason')}"


def exchange(code, verifier, redirect_uri=CALLBACK):
    return requests.post(discovery["token_endpoint"], data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                                                            "client_id": CLIENT, "code_verifier": verifier}, timeout=10)


def check(name, function):
    try:
        report[name] = function()
    except Exception as error:  # every failure is reported, with what the page showed
        report[name] = f"failed: {type(error).__name__}: {error}"


driver = browser()
try:
    # 1. Sign up with a passkey through /authorize; land on the redirect URI with a code that
    #    Authlib exchanges, the id token verified from discovery and JWKS alone.
    client = new_client()
    url, state, verifier, nonce = authorization_url(client)
    driver.get(url)
    wait_for(driver, lambda d: "/login" in d.current_url)
    shoot(driver, "login")
    report["login_app_name"] = by_test_id(driver, "app-name").text
    by_test_id(driver, "passkey-signin")  # present (the script shows it where WebAuthn is)
    report["passkey_button_shown"] = by_test_id(driver, "passkey-signin").is_displayed()
    report["email_autocomplete"] = by_test_id(driver, "email").get_attribute("autocomplete")
    driver.find_element(By.LINK_TEXT, "Create one").click()
    wait_for(driver, lambda d: "/signup" in d.current_url)
    by_test_id(driver, "email").send_keys("ada@example.test")
    by_test_id(driver, "name").send_keys("Ada <Lovelace>")
    shoot(driver, "signup")
    by_test_id(driver, "signup-submit").click()
    params = landed(driver)
    report["signup_state_matches"] = params.get("state") == state
    report["signup_iss"] = params.get("iss")
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=driver.current_url, code_verifier=verifier)
    claims = verify_id_token(token["id_token"], nonce)
    report["signup_id_token"] = {"email": claims.get("email"), "name": claims.get("name"), "amr": claims.get("amr"), "nonce_ok": claims.get("nonce") == nonce}
    report["signup_refresh_token"] = bool(token.get("refresh_token"))
    userinfo = requests.get(discovery["userinfo_endpoint"], headers={"Authorization": "Bearer " + token["access_token"]}, timeout=10).json()
    report["userinfo_email"] = userinfo.get("email")
    first_code, first_refresh = params["code"], token["refresh_token"]

    # 2. Refusals at the token endpoint, each with a fresh code from the SSO session (no page).
    response = exchange(first_code, verifier)
    report["code_reused"] = token_error(response)
    report["reuse_revoked_refresh"] = token_error(requests.post(discovery["token_endpoint"], data={
        "grant_type": "refresh_token", "refresh_token": first_refresh, "client_id": CLIENT}, timeout=10))
    url, state, verifier, nonce = authorization_url(new_client())
    driver.get(url)
    params = landed(driver)
    report["sso_skips_page"] = "code" in params
    report["wrong_verifier"] = token_error(exchange(params["code"], secrets.token_urlsafe(48)))
    report["burnt_after_wrong_verifier"] = token_error(exchange(params["code"], verifier))
    url, state, verifier, nonce = authorization_url(new_client())
    driver.get(url)
    params = landed(driver)
    report["wrong_redirect_uri"] = token_error(exchange(params["code"], verifier, redirect_uri=CALLBACK + "/other"))
    url, state, verifier, nonce = authorization_url(new_client())
    driver.get(url)
    params = landed(driver)
    response = exchange(params["code"], verifier)
    report["sso_exchange"] = response.status_code  # a live app session for the account page
    no_pkce = discovery["authorization_endpoint"] + "?" + urllib.parse.urlencode(
        {"response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK, "scope": "openid", "state": "s1"})
    driver.get(no_pkce)
    report["missing_pkce"] = landed(driver).get("error")

    # A pushed authorization request (RFC 9126): the parameters posted from the app's side, the
    # browser sent with client_id and request_uri alone, the code exchanged by Authlib.
    par_verifier, par_state, par_nonce = secrets.token_urlsafe(48), secrets.token_urlsafe(8), secrets.token_urlsafe(16)
    pushed = requests.post(discovery["pushed_authorization_request_endpoint"], data={
        "response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK, "scope": "openid email", "state": par_state, "nonce": par_nonce,
        "code_challenge": create_s256_code_challenge(par_verifier), "code_challenge_method": "S256"}, timeout=10)
    driver.get(discovery["authorization_endpoint"] + "?" + urllib.parse.urlencode({"client_id": CLIENT, "request_uri": pushed.json()["request_uri"]}))
    params = landed(driver)
    token = new_client().fetch_token(discovery["token_endpoint"], authorization_response=driver.current_url, code_verifier=par_verifier)
    report["par"] = {"pushed": pushed.status_code, "state_ok": params.get("state") == par_state,
                     "nonce_ok": verify_id_token(token["id_token"], par_nonce).get("nonce") == par_nonce}

    # A token for the API, and the API's resource server asking about it through Authlib's
    # introspection (RFC 7662), before and after the app signs out.
    url, state, verifier, nonce = authorization_url(new_client(), resource=API)
    driver.get(url)
    api_tokens = exchange(landed(driver)["code"], verifier).json()
    resource_server = OAuth2Session(RS_ID, RS_SECRET, token_endpoint_auth_method="client_secret_basic")
    seen = resource_server.introspect_token(discovery["introspection_endpoint"], token=api_tokens["access_token"]).json()
    report["introspected"] = {name: seen.get(name) for name in ("active", "aud", "client_id", "token_type", "amr", "acr")}
    new_client().revoke_token(discovery["revocation_endpoint"], token=api_tokens["refresh_token"], token_type_hint="refresh_token")
    report["introspected_after_sign_out"] = resource_server.introspect_token(discovery["introspection_endpoint"], token=api_tokens["access_token"]).json()

    # 3. The account page: add a passkey, rename one, revoke one, end the app session.
    driver.get(BASE + "/account")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]'))
    report["account_passkeys_before"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]'))
    report["account_sessions_before"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="session-row"]'))
    report["current_session_marked"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="session-current"]'))
    # This browser's row signs out, as the button at the foot does; the others are removed.
    current = driver.find_element(By.CSS_SELECTOR, '[data-testid="session-row"][data-current="true"]')
    report["current_session_actions"] = [b.get_attribute("data-testid") for b in current.find_elements(By.CSS_SELECTOR, "button")]
    # A second authenticator makes the new passkey (the first holds one this account excludes).
    first = swap_authenticator(driver)
    by_test_id(driver, "create-passkey").click()
    wait_for(driver, lambda d: "notice=added" in d.current_url)
    rows = driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]')
    report["account_passkeys_after_add"] = len(rows)
    report["names_after_add"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-name"]')]
    field = rows[0].find_element(By.CSS_SELECTOR, '[data-testid="passkey-rename-input"]')
    field.clear()
    field.send_keys("Work laptop")
    rows[0].find_element(By.CSS_SELECTOR, '[data-testid="passkey-rename"]').click()
    wait_for(driver, lambda d: "notice=renamed" in d.current_url)
    report["renamed"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-name"]')]
    driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]')[-1].find_element(By.CSS_SELECTOR, '[data-testid="passkey-revoke"]').click()
    wait_for(driver, lambda d: "notice=revoked" in d.current_url)
    report["account_passkeys_after_revoke"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]'))
    # The one left cannot be removed: no button for it, a line that says why.
    report["last_passkey_buttons"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-revoke"]'))
    report["last_passkey_hint"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="only-passkey"]')]
    swap_authenticator(driver, first)  # the first passkey again, for the step-up and sign-in below
    app_rows = [r for r in driver.find_elements(By.CSS_SELECTOR, '[data-testid="session-row"]') if r.get_attribute("data-current") != "true"]
    report["app_sessions_listed"] = len(app_rows)
    app_rows[0].find_element(By.CSS_SELECTOR, '[data-testid="session-revoke"]').click()
    wait_for(driver, lambda d: "notice=session_revoked" in d.current_url)
    report["sessions_after_revoke"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="session-row"]'))
    report["events_listed"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="event-row"]'))
    time.sleep(0.3)
    signals = driver.execute_script("return window.__signals")
    report["signals"] = sorted({name for name, _ in signals})
    accepted = [options for name, options in signals if name == "signalAllAcceptedCredentials"]
    report["signal_accepted_ids"] = len(accepted[-1]["allAcceptedCredentialIds"]) if accepted else None
    # No role, no section; an operator's role shows, with what it grants in the setting's words.
    report["roles_before"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="roles-section"]'))
    give_role(signed_in_as(driver))
    driver.get(BASE + "/account")
    report["roles"] = [[e.find_element(By.CSS_SELECTOR, ".row-title").text] +
                       [" ".join(x.text for x in e.find_elements(By.CSS_SELECTOR, f'[data-testid="{t}"]')) for t in ("role-grants", "role-until")]
                       for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="role-row"]')]
    shoot(driver, "account")
    # The same page in German, whose long compound words must still fit a phone's width.
    driver.get(BASE + "/account?ui_locales=de")
    report["german_account_title"] = driver.find_element(By.TAG_NAME, "h1").text
    shoot(driver, "account-de")
    driver.get(BASE + "/account")
    # Delete account: folded away; opened, a wrong address is refused and nothing changes.
    driver.find_element(By.CSS_SELECTOR, '[data-testid="delete-section"] summary').click()
    by_test_id(driver, "delete-confirm").send_keys("someone-else@example.test")
    by_test_id(driver, "delete-account").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="delete-error"]'))
    report["delete_refused"] = by_test_id(driver, "delete-error").is_displayed()
    shoot(driver, "delete-refused")

    # 4. An old session: a change shows the step-up prompt; the passkey check makes it.
    advance(600)
    driver.get(BASE + "/account")
    rows = driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]')
    field = rows[0].find_element(By.CSS_SELECTOR, '[data-testid="passkey-rename-input"]')
    field.clear()
    field.send_keys("Home desktop")
    rows[0].find_element(By.CSS_SELECTOR, '[data-testid="passkey-rename"]').click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="step-up-prompt"]'))
    report["step_up_prompt"] = True
    shoot(driver, "step-up")
    by_test_id(driver, "step-up").click()
    wait_for(driver, lambda d: "notice=renamed" in d.current_url)
    report["renamed_after_step_up"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-name"]')]

    # 4b. Another device asks to sign in (RFC 8628); its link shows who asks before the buttons.
    started = requests.post(BASE + "/oauth/device/code", data={"client_id": CLIENT, "scope": "openid"},
                            headers={"User-Agent": "Living room TV/2.1"}, timeout=10).json()
    driver.get(started["verification_uri_complete"])
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="device-request"]'))
    report["device_request_shown"] = {name: by_test_id(driver, "device-request-" + name).text for name in ["code", "device", "address"]}
    shoot(driver, "device")
    by_test_id(driver, "device-approve").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="notice"]'))
    report["device_done_leads_to_account"] = bool(driver.find_elements(By.CSS_SELECTOR, '[data-testid="device-account"]'))
    shoot(driver, "device-done")
    polled = requests.post(BASE + "/oauth/token", data={"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": CLIENT,
                                                         "device_code": started["device_code"]}, timeout=10)
    report["device_signed_in"] = polled.status_code == 200 and "access_token" in polled.json()
    report["device_user_code"] = started["user_code"]
    driver.get(BASE + "/account")

    # 4c. "Download your data" after that fresh passkey check: the browser saves the file.
    downloads = tempfile.mkdtemp(prefix="signet-downloads-")
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    by_test_id(driver, "export-data").click()
    saved = os.path.join(downloads, "account-data.json")
    wait_for(driver, lambda d: os.path.exists(saved) and os.path.getsize(saved) > 0)
    with open(saved, encoding="utf-8") as f:
        exported = json.load(f)
    report["export"] = {"format": exported["format"], "email": exported["account"]["email"], "passkeys": len(exported["passkeys"]),
                        "events": len(exported["events"]), "url": driver.current_url}

    # 4d. The history, 15 events at a time: names saved until there is an older page, then
    #     "Older events" and back to the newest.
    driver.get(BASE + "/account")
    for n in range(16):
        if driver.find_elements(By.CSS_SELECTOR, '[data-testid="older-events"]'):
            break
        field = by_test_id(driver, "account-name")
        field.clear()
        field.send_keys(f"Ada {n}")
        by_test_id(driver, "account-rename").click()
        # From the second rename on, the URL already has the notice: wait for the page to be
        # replaced, or the next field may be looked for in the page being left.
        WebDriverWait(driver, 15, poll_frequency=0.05).until(left(field))
        wait_for(driver, lambda d: "notice=name_changed" in d.current_url and d.find_elements(By.CSS_SELECTOR, '[data-testid="account-name"]'))
    report["newest_events_listed"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="event-row"]'))
    by_test_id(driver, "older-events").click()
    wait_for(driver, lambda d: "events_before=" in d.current_url and d.find_elements(By.CSS_SELECTOR, '[data-testid="newest-events"]'))
    report["older_events_listed"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="event-row"]'))
    report["older_events_scrolled"] = driver.execute_script("return window.scrollY > 0")
    shoot(driver, "account-older")
    by_test_id(driver, "newest-events").click()
    wait_for(driver, lambda d: "events_before=" not in d.current_url)
    report["back_to_newest"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="event-row"]'))

    # 5. Sign out: the sign-in page's passkey autofill (mediation "conditional") signs in again
    #    with the passkey this browser holds. Then sign out with no passkey in the authenticator
    #    (autofill finds none), put it back, and sign in with the passkey button.
    #    First an app signs in through this browser's session without offline_access; the
    #    sign-out tells it so through its back-channel logout URI, and its token stops working.
    url, state, verifier, nonce = authorization_url(new_client(), scope="openid email")
    driver.get(url)
    online = exchange(landed(driver)["code"], verifier).json()
    online_claims = verify_id_token(online["id_token"], nonce)
    # The page an app's sign-out link leads to names the apps that will be told.
    driver.get(BASE + "/logout?client_id=" + CLIENT)
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="signout"]'))
    report["signout_apps"] = [li.text for li in driver.find_elements(By.CSS_SELECTOR, '[data-testid="signout-apps"] li')]
    shoot(driver, "signout")
    sign_out(driver)
    deadline = time.time() + 15
    while time.time() < deadline and not any(t.get("sid") == online_claims["sid"] for t in logout_tokens):
        time.sleep(0.1)
    told = [t for t in logout_tokens if t.get("sid") == online_claims["sid"]]
    report["backchannel_logout"] = dict(told[0], sub=told[0]["sub"] == online_claims["sub"], count=len(told)) if told else None
    report["backchannel_failures"] = [t["failed"] for t in logout_tokens if "failed" in t]
    report["backchannel_userinfo_after"] = requests.get(discovery["userinfo_endpoint"], headers={"Authorization": "Bearer " + online["access_token"]},
                                                        timeout=10).status_code
    report["autofill_signin"] = signed_in_as(driver)
    held = swap_authenticator(driver)
    sign_out(driver)
    wait_for(driver, lambda d: "/login" in d.current_url and by_test_id(d, "passkey-signin").is_displayed())
    # Only once the page's autofill request (made after fetching its options) has ended, refused
    # by the empty authenticator: put back earlier, the passkey would answer that request and
    # sign in by itself.
    wait_for(driver, lambda d: d.execute_script("return document.documentElement.dataset.autofill") == "ended")
    swap_authenticator(driver, held)
    # By keyboard alone: Tab from the top of the page to the button, then Enter.
    click(driver, lambda d: d.find_element(By.TAG_NAME, "body"))
    for _ in range(12):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.switch_to.active_element.get_attribute("data-testid") == "passkey-signin":
            break
    report["passkey_button_by_keyboard"] = driver.switch_to.active_element.get_attribute("data-testid") == "passkey-signin"
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    report["passkey_button_signin"] = signed_in_as(driver)

    # 6. prompt=none without a session: login_required, back at the client.
    driver.delete_all_cookies()
    url, state, verifier, nonce = authorization_url(new_client(), prompt="none")
    driver.get(url)
    report["prompt_none"] = landed(driver).get("error")

    # 6b. acr_values=phr (RFC 9470 §4): the sign-in page offers the passkey alone, says why, and
    #     has a way back, which answers unmet_authentication_requirements; the passkey button
    #     signs in, and the id token Authlib gets says acr phr.
    url, state, verifier, nonce = authorization_url(new_client(), acr_values="phr")
    driver.get(url)
    wait_for(driver, lambda d: "/login" in d.current_url and by_test_id(d, "passkey-signin").is_displayed())
    report["phr_page"] = {"notice": by_test_id(driver, "passkey-required").is_displayed(),
                          "email_code": bool(driver.find_elements(By.CSS_SELECTOR, '[data-testid="send-code"]')),
                          "autofill": driver.execute_script("return document.documentElement.dataset.autofill || null")}
    shoot(driver, "login-passkey-only")
    by_test_id(driver, "cancel-authorization").click()
    cancelled = landed(driver)
    report["phr_cancelled"] = {"error": cancelled.get("error"), "state_ok": cancelled.get("state") == state, "code": cancelled.get("code")}
    client = new_client()
    url, state, verifier, nonce = authorization_url(client, acr_values="phr")
    driver.get(url)
    wait_for(driver, lambda d: by_test_id(d, "passkey-signin").is_displayed())
    click(driver, lambda d: by_test_id(d, "passkey-signin"))
    landed(driver)
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=driver.current_url, code_verifier=verifier)
    report["phr_id_token_acr"] = verify_id_token(token["id_token"], nonce).get("acr")

    # 7. A new browser signs in by email code through /authorize, and accepts the passkey offer.
    driver.quit()
    driver = browser()
    client = new_client()
    url, state, verifier, nonce = authorization_url(client, login_hint="grace@example.test")
    driver.get(url)
    wait_for(driver, lambda d: "/login" in d.current_url)
    report["login_hint_prefilled"] = by_test_id(driver, "email").get_attribute("value")
    by_test_id(driver, "send-code").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="code"]'))
    shoot(driver, "code")
    code, _ = code_for("grace@example.test")
    # Typed in two groups, as people read it out of a message: the field's pattern lets it through.
    by_test_id(driver, "code").send_keys(code[:3] + " " + code[3:])
    by_test_id(driver, "verify-code").click()
    wait_for(driver, lambda d: "/account/passkey-offer" in d.current_url)
    shoot(driver, "offer")
    by_test_id(driver, "create-passkey").click()
    params = landed(driver)
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=driver.current_url, code_verifier=verifier)
    report["code_signin_amr"] = verify_id_token(token["id_token"], nonce).get("amr")
    driver.get(BASE + "/account")
    report["offer_created_passkey"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]'))

    # 7b. The address moves: a code session must step up with the passkey it just made, then the
    #     code sent to the new address confirms it.
    driver.find_element(By.CSS_SELECTOR, '[data-testid="email-section"] summary').click()
    by_test_id(driver, "new-email").send_keys("grace.hopper@example.test")
    by_test_id(driver, "email-change").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="step-up-prompt"]'))
    report["email_change_step_up"] = True
    by_test_id(driver, "step-up").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="email-code"]'))
    report["email_pending"] = by_test_id(driver, "email-pending").text
    shoot(driver, "email-code")
    change_code, _ = code_for("grace.hopper@example.test", kind="email_change_code")
    by_test_id(driver, "email-code").send_keys(change_code)
    by_test_id(driver, "email-verify").click()
    wait_for(driver, lambda d: "notice=email_changed" in d.current_url)
    report["email_changed_to"] = by_test_id(driver, "account-email").text

    # 8. A passkey Signet does not know (deleted on the server, still in the provider): the
    #    sign-in fails as credential_unknown and the page tells the provider (Signal API).
    swap_authenticator(driver)
    stranger = ec.generate_private_key(ec.SECP256R1()).private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                                                     serialization.NoEncryption())
    unknown_id = secrets.token_bytes(16)
    driver.add_credential(Credential.create_resident_credential(unknown_id, "localhost", b"someone", stranger, 0))
    driver.delete_all_cookies()
    driver.get(BASE + "/login")
    wait_for(driver, lambda d: any(name == "signalUnknownCredential" for name, _ in d.execute_script("return window.__signals")))
    signalled = [o for n, o in driver.execute_script("return window.__signals") if n == "signalUnknownCredential"][0]
    report["signal_unknown"] = signalled.get("credentialId") == base64.urlsafe_b64encode(unknown_id).decode().rstrip("=")
    report["unknown_passkey_status"] = driver.find_element(By.ID, "status").text

    # 9. A wrong code shows the code page again with its reason (no passkey here to autofill).
    swap_authenticator(driver)
    driver.delete_all_cookies()
    advance(120)  # past the send interval
    driver.get(BASE + "/login")
    by_test_id(driver, "email").send_keys("grace@example.test")
    by_test_id(driver, "send-code").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="code"]'))
    by_test_id(driver, "code").send_keys("000000" if code != "000000" else "111111")
    by_test_id(driver, "verify-code").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="error"]'))
    report["wrong_code_reason"] = by_test_id(driver, "error").get_attribute("data-reason")

    # 10. Spanish, by ui_locales; the error page for an unknown client.
    driver.get(BASE + "/login?ui_locales=es")
    report["spanish_title"] = driver.find_element(By.TAG_NAME, "h1").text
    report["spanish_lang"] = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
    shoot(driver, "login-es")
    # French from the Spanish page's own language link.
    driver.find_element(By.CSS_SELECTOR, 'footer a[hreflang="fr"]').click()
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "fr")
    report["french_title"] = driver.find_element(By.TAG_NAME, "h1").text
    report["french_current"] = driver.find_element(By.CSS_SELECTOR, 'footer a[aria-current="true"]').get_attribute("hreflang")
    shoot(driver, "login-fr")
    # German from the French page's link.
    driver.find_element(By.CSS_SELECTOR, 'footer a[hreflang="de"]').click()
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de")
    report["german_title"] = driver.find_element(By.TAG_NAME, "h1").text
    shoot(driver, "login-de")
    driver.get(discovery["authorization_endpoint"] + "?response_type=code&client_id=nobody&redirect_uri=" + urllib.parse.quote(CALLBACK))
    report["unknown_client_page"] = by_test_id(driver, "error").get_attribute("data-reason")
    report["unknown_client_stayed"] = driver.current_url.startswith(BASE)
    shoot(driver, "error")
    # A request_uri that /oauth/par never gave out (or one that expired): the error page, no redirect.
    driver.get(discovery["authorization_endpoint"] + "?" + urllib.parse.urlencode({"client_id": CLIENT, "request_uri": "urn:ietf:params:oauth:request_uri:gone"}))
    report["par_invalid_page"] = by_test_id(driver, "error").get_attribute("data-reason")
    report["par_invalid_text"] = by_test_id(driver, "error").text
    shoot(driver, "par-invalid")

    # 11. An operator's enrollment link, opened in a browser whose authenticator holds nothing:
    #     the link leaves the address bar, the account's address shows, and one click makes the
    #     first passkey and lands signed in on the account page. The link works once.
    swap_authenticator(driver)
    driver.delete_all_cookies()
    link = os.environ["SIGNET_ENROLLMENT_LINK"]
    driver.get(link)
    report["enroll_email"] = wait_for(driver, lambda d: by_test_id(d, "enroll-email").text)
    report["enroll_link_hidden"] = "#" not in driver.current_url and "/enroll" in driver.current_url
    shoot(driver, "enroll")
    # The options fetched with the page expire at the server while the page still holds them
    # (its own clock has not moved): the passkey is made, the server refuses it, and the page
    # tells the provider to forget it (Signal API).
    advance(301)
    by_test_id(driver, "enroll").click()
    wait_for(driver, lambda d: any(n == "signalUnknownCredential" for n, _ in d.execute_script("return window.__signals")))
    # Chromium's authenticator acts on the signal: the passkey it made is gone from it.
    wait_for(driver, lambda d: not d.get_credentials())
    report["enroll_refused_forgotten"] = [o.get("credentialId") for n, o in driver.execute_script("return window.__signals") if n == "signalUnknownCredential"]
    report["enroll_refused_status"] = driver.find_element(By.ID, "status").text
    # The page is left open past half its options' life (its clock, and Signet's, move on):
    # the click asks for new options, and the passkey is kept.
    swap_authenticator(driver)
    driver.refresh()
    wait_for(driver, lambda d: by_test_id(d, "enroll-email").text)
    driver.execute_script("const now = Date.now; Date.now = () => now() + 301000;")
    advance(301)
    click(driver, lambda d: by_test_id(d, "enroll"))
    report["enroll_signed_in"] = signed_in_as(driver)
    report["enroll_passkeys"] = len(driver.find_elements(By.CSS_SELECTOR, "[data-credential-id]"))
    # Recovery codes made on the account page (the sign-in is fresh), kept for step 13.
    click(driver, lambda d: by_test_id(d, "recovery-generate"))
    recovery_code = wait_for(driver, lambda d: [c.text for c in d.find_elements(By.CSS_SELECTOR, '[data-testid="recovery-codes"] code')][:1])[0]
    driver.delete_all_cookies()
    driver.get(link)
    wait_for(driver, lambda d: d.find_element(By.ID, "status").text not in ("", "Checking the link…"))
    report["enroll_again"] = driver.find_element(By.ID, "status").text

    # 13. Passkeys lost: a browser whose authenticator holds nothing follows the sign-in page's
    #     link to a recovery code, types one as people do (lower case), lands on the passkey
    #     offer, makes a passkey, and the account page shows the recovery that passkey opened
    #     (the account had a passkey from before).
    swap_authenticator(driver)
    driver.delete_all_cookies()
    driver.get(BASE + "/login")
    click(driver, lambda d: by_test_id(d, "use-recovery-code"))
    wait_for(driver, lambda d: "/login/recovery" in d.current_url)
    by_test_id(driver, "email").send_keys("lin@example.test")
    by_test_id(driver, "recovery-code").send_keys(recovery_code.lower())
    shoot(driver, "recovery-signin")
    by_test_id(driver, "recovery-signin").click()
    wait_for(driver, lambda d: "/account/passkey-offer" in d.current_url)
    click(driver, lambda d: by_test_id(d, "create-passkey"))
    wait_for(driver, lambda d: "/account/passkey-offer" not in d.current_url)
    driver.get(BASE + "/account")
    report["recovery_signed_in"] = signed_in_as(driver)
    report["recovery_open"] = bool(driver.find_elements(By.CSS_SELECTOR, '[data-testid="recovery-open"]'))
    report["recovery_passkeys"] = len(driver.find_elements(By.CSS_SELECTOR, "[data-credential-id]"))
    shoot(driver, "recovery-held")

    # 12. Sign-up where accounts are for an organization's domains (a second Signet, started with
    #     signup_domains and the organization's branding): the page asks for a code first; an
    #     address elsewhere is told why; one at the domain gets the code, then the passkey offer
    #     makes its passkey.
    code_first = os.environ.get("SIGNET_CODE_FIRST_BASE")
    if code_first:
        swap_authenticator(driver)
        driver.delete_all_cookies()
        driver.get(code_first + "/signup")
        report["code_first_hint"] = bool(by_test_id(driver, "code-first").text)
        report["code_first_button"] = by_test_id(driver, "signup-submit").text
        # Its branding: the logo loaded (under the pages' CSP), the button and page in its colours.
        report["brand_logo_width"] = driver.execute_script("const i = document.querySelector('[data-testid=logo]'); return i && i.complete ? i.naturalWidth : 0")
        report["brand_button"] = driver.execute_script("const b = getComputedStyle(document.querySelector('[data-testid=signup-submit]')); return [b.backgroundColor, b.color]")
        report["brand_page"] = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        shoot(driver, "signup-code-first")
        by_test_id(driver, "email").send_keys("eve@elsewhere.test")
        by_test_id(driver, "signup-submit").click()
        report["code_first_refused"] = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "[data-reason]").get_attribute("data-reason"))
        shoot(driver, "signup-domain-refused")
        field = by_test_id(driver, "email")
        field.clear()
        field.send_keys("ada@acme.test")
        by_test_id(driver, "signup-submit").click()
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="code"]'))
        code, _ = code_for("ada@acme.test")
        by_test_id(driver, "code").send_keys(code)
        by_test_id(driver, "verify-code").click()
        wait_for(driver, lambda d: "/account/passkey-offer" in d.current_url)
        by_test_id(driver, "create-passkey").click()
        wait_for(driver, lambda d: "/account/passkey-offer" not in d.current_url)
        driver.get(code_first + "/account")
        report["code_first_signed_in"] = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "p.who").text)
        report["code_first_passkeys"] = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="passkey-row"]'))
    report["console_errors"] = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE" and "favicon" not in e["message"]
                                and "/login/code/verify" not in e["message"] and "/login/passkey" not in e["message"] and "client_id=nobody" not in e["message"]
                                and "request_uri=" not in e["message"] and "/enroll/options" not in e["message"] and "/enroll/passkey" not in e["message"]
                                and not (code_first and e["message"].startswith(code_first + "/signup"))]
except TimeoutException as error:
    report["failed"] = f"timed out at {driver.current_url}: " + driver.find_element(By.TAG_NAME, "body").text[:500]
except Exception as error:
    # The script's own line that failed, so a report from CI says which step it was.
    line = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__][-1:]
    report["failed"] = f"{type(error).__name__}: {error} at {driver.current_url} (browser-check.py line {line[0] if line else '?'})"
finally:
    driver.quit()
print("report " + json.dumps(report), flush=True)
