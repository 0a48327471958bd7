import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing
import SignetTestSupport

/// `acr` and `acr_values` (OIDC Core §2 and §3.1.2.1, RFC 9470 §4 and §6, OpenID Connect EAP ACR
/// Values 1.0 `phr`): which sign-ins are phishing-resistant, what the tokens say, and what
/// `/authorize` does when a client asks for one.
@Suite struct AuthenticationContextTests {
    @Test("phr is reached by a passkey's assertion only, phrh by a hardware-bound one's: not a code, not an approval on another device; acr_values matched by bytes, unknown ones ignored")
    func classes() {
        #expect(AuthenticationContext.reached(amr: ["pop", "user"]) == "phr" && AuthenticationContext.reached(amr: ["pop"]) == "phr")
        #expect(AuthenticationContext.reached(amr: ["pop", "hwk", "user"]) == "phrh" && AuthenticationContext.reached(amr: ["pop", "hwk", "mca"]) == nil)
        #expect(AuthenticationContext.meets("phrh", anyOf: ["phr"]) && AuthenticationContext.meets("phrh", anyOf: ["phrh"]) && AuthenticationContext.meets("phr", anyOf: ["phrh", "phr"]))
        #expect(!AuthenticationContext.meets("phr", anyOf: ["phrh"]) && !AuthenticationContext.meets(nil, anyOf: ["phr"]))
        #expect(AuthenticationContext.reached(amr: ["otp"]) == nil && AuthenticationContext.reached(amr: []) == nil)
        #expect(AuthenticationContext.reached(amr: ["hwk", "mca"]) == nil && AuthenticationContext.reached(amr: ["pop", "mca"]) == nil)
        #expect(AuthenticationContext.reached(amr: ["hwk"]) == nil, "an action's device-key approval is no sign-in")
        #expect(AuthenticationContext.requested("phr") == ["phr"] && AuthenticationContext.requested("urn:x:loa2  phr ") == ["phr"])
        #expect(AuthenticationContext.requested("phrh phr") == ["phrh", "phr"])
        for ignored in [nil, "", " ", "PHR", "phrh\u{301}", "urn:x:loa2", "phr\u{301}", "\u{301}phr", "phr\tx", "ph r"] {
            #expect(AuthenticationContext.requested(ignored) == nil, "\(ignored.debugDescription)")
        }
    }

    @Test("a passkey's tokens say acr phr (access, id, after a refresh); the discovery document lists phr and the acr claim")
    func passkeyTokens() throws {
        let server = try TestServer()
        let phone = Phone(server)
        for tokens in [try phone.signUp(email: "acr@signet.test"), try phone.signIn()] {
            #expect(jwtClaims(tokens["access_token"]?.string)["acr"] == .string("phr") && jwtClaims(tokens["id_token"]?.string)["acr"] == .string("phr"))
            let refreshed = try server.post("/oauth/token", .object([
                "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"]),
            ]))
            #expect(refreshed.status == 200 && jwtClaims(refreshed.json["access_token"]?.string)["acr"] == .string("phr"))
            #expect(jwtClaims(refreshed.json["id_token"]?.string)["acr"] == .string("phr"))
        }
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["acr_values_supported"] == .array([.string("phr"), .string("phrh")]))
        #expect(discovery["claims_supported"]?.array?.contains(.string("acr")) == true)
    }
}

/// The browser flow with `acr_values`, which needs the email code for a session that is not a
/// passkey's.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct AuthorizeACRTests {
    /// A browser signed in by an email code on the pages, holding the passkey of the account
    /// (made by another browser), so it can then sign in with it.
    static func codeSession(_ server: TestServer, _ smtp: SMTPServer, email: String) throws -> WebBrowser {
        let other = WebBrowser(server)
        try other.signUp(email: email)
        let browser = WebBrowser(server, authenticator: other.authenticator)
        try browser.page("/login")
        let sent = try browser.form("/login/code", [("email", email)])
        try #require(sent.status == 200, "send code: \(sent.html.prefix(300))")
        let signedIn = try browser.form("/login/code/verify", [("email", email), ("code", try smtp.code(for: email))])
        try #require(signedIn.status == 303, "verify: \(signedIn.html.prefix(300))")
        return browser
    }

    static func server(_ smtp: SMTPServer) throws -> TestServer {
        try TestServer(smtp: smtp) { c in TestServer.webClients(&c) }
    }

    @Test("acr_values=phr: a code session is not enough (the page with the passkey alone; prompt=none login_required); a passkey sign-in then gets a phr code")
    func codeSessionStepsUp() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let browser = try Self.codeSession(server, smtp, email: "acr-web@signet.test")
        // Without acr_values the code session answers at once, and its tokens have no acr.
        let pkce = PKCE()
        let weak = try server.authorize(browser, pkce: pkce)
        let weakTokens = try server.exchange(code: try #require(WebBrowser.query(weak.headers["location"])["code"]), verifier: pkce.verifier)
        #expect(weakTokens.status == 200 && jwtClaims(weakTokens.json["access_token"]?.string)["amr"] == .array([.string("otp")]))
        #expect(jwtClaims(weakTokens.json["access_token"]?.string)["acr"] == nil && jwtClaims(weakTokens.json["id_token"]?.string)["acr"] == nil)
        // Values Signet does not know are ignored (OIDC Core: acr_values asks, it does not demand).
        for ignored in ["phr\u{200B}", "urn:example:loa2", "PHR"] {
            #expect(try server.authorize(browser, extra: [("acr_values", ignored)]).headers["location"]?.contains("code=") == true, "\(ignored)")
        }
        // With phr, among others: the page, not a code.
        let strong = PKCE()
        let asked = try server.authorize(browser, pkce: strong, extra: [("acr_values", "urn:example:loa2 phr")])
        let location = try #require(asked.headers["location"])
        #expect(location.hasPrefix("/login?authorization="), "\(location)")
        let sealed = try #require(WebBrowser.query(location)["authorization"])
        let page = try browser.page(location)
        #expect(page.html.contains("data-testid=\"passkey-required\"") && page.html.contains("data-testid=\"passkey-signin\""))
        #expect(!page.html.contains("data-testid=\"send-code\"") && !page.html.contains("action=\"/login/code\""), "no email code on the page")
        #expect(page.html.contains("href=\"/authorize/cancel?authorization=\(sealed)\""))
        #expect(WebBrowser.query(try server.authorize(browser, extra: [("acr_values", "phr"), ("prompt", "none")]).headers["location"])["error"] == "login_required")
        // The continuation does not take the code session either.
        #expect(try browser.send("GET", "/authorize/continue?authorization=" + sealed).headers["location"] == "/login?authorization=" + sealed)
        // A passkey sign-in in the same browser answers it.
        let signIn = try browser.signIn(authorization: sealed)
        #expect(signIn.status == 200, "\(signIn.json.serialized)")
        let answer = try browser.send("GET", try #require(signIn.json["redirect"]?.string))
        let query = WebBrowser.query(answer.headers["location"])
        let tokens = try server.exchange(code: try #require(query["code"], "\(answer.headers)"), verifier: strong.verifier)
        #expect(tokens.status == 200 && jwtClaims(tokens.json["access_token"]?.string)["acr"] == .string("phr"))
        #expect(jwtClaims(tokens.json["id_token"]?.string)["acr"] == .string("phr") && jwtClaims(tokens.json["id_token"]?.string)["nonce"] == .string("n-1"))
        // And now the session is a passkey's: phr with prompt=none answers at once.
        #expect(try server.authorize(browser, extra: [("acr_values", "phr"), ("prompt", "none")]).headers["location"]?.contains("code=") == true)
    }

    @Test("cancel: unmet_authentication_requirements for a phr request, access_denied for another, with state and iss; a stale request gets the error page")
    func cancel() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let browser = WebBrowser(server)
        for (acr, error, reason) in [("phr", "unmet_authentication_requirements", "unmet_authentication_requirements"), (nil, "access_denied", "sign_in_cancelled")] {
            let asked = try server.authorize(browser, extra: acr.map { [("acr_values", $0)] } ?? [])
            let location = try #require(asked.headers["location"])
            let sealed = try #require(WebBrowser.query(location)["authorization"])
            let page = try browser.page(location)
            #expect(page.html.contains("data-testid=\"cancel-authorization\""))
            #expect(page.html.contains("data-testid=\"send-code\"") == (acr == nil))
            // The sign-up page and the code's page of the request have it too.
            let link = "href=\"/authorize/cancel?authorization=\(sealed)\""
            #expect(try browser.page("/signup?authorization=" + sealed).html.contains(link))
            if acr == nil {
                let sent = try browser.form("/login/code", [("email", "cancel@signet.test"), ("authorization", sealed)])
                #expect(sent.status == 200 && sent.html.contains("data-testid=\"code\"") && sent.html.contains(link))
            }
            let cancelled = try browser.send("GET", "/authorize/cancel?authorization=" + sealed)
            let target = try #require(cancelled.headers["location"])
            #expect(cancelled.status == 303 && target.hasPrefix("https://app.signet.test/callback?"), "\(target)")
            let query = WebBrowser.query(target)
            #expect(query["error"] == error && query["reason"] == reason && query["state"] == "st-1" && query["iss"] == "https://signet.test", "\(target)")
            #expect(query["code"] == nil)
        }
        // Without a pending request, no way back is offered; a tampered one is not followed.
        #expect(!(try browser.page("/login").html.contains("cancel-authorization")))
        let stale = try browser.send("GET", "/authorize/cancel?authorization=AAAA", headers: [("Accept", "text/html")])
        #expect(stale.status == 400 && stale.headers["location"] == nil && String(decoding: stale.body, as: UTF8.self).contains("data-reason=\"auth_session_expired\""))
        #expect(try browser.send("GET", "/authorize/cancel").headers["location"] == nil)
    }

    @Test("step-up's challenge asks for phr where only a passkey would do, and not where a fresh code session would")
    func stepUpChallenge() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        try server.startEmail("acr-code@signet.test")
        let tokens = try server.signIn(email: "acr-code@signet.test", code: try smtp.code(for: "acr-code@signet.test"))
        let bearer = ("Authorization", "Bearer " + (try #require(tokens.json["access_token"]?.string)))
        server.clock.advance(301)
        // Adding a first passkey: a fresh code session would do, so the challenge asks only for recency.
        let add = try server.send("POST", "/me/passkeys/options", headers: [bearer, ("Content-Type", "application/json")], body: Array("{}".utf8))
        let challenge = try #require(add.headers["www-authenticate"], "\(add.status)")
        #expect(add.status == 401 && challenge.contains(#"max_age="300""#) && !challenge.contains("acr_values"), "\(challenge)")
        // Making recovery codes: only a passkey's sign-in would do.
        let codes = try server.send("POST", "/me/recovery-codes", headers: [bearer, ("Content-Type", "application/json")], body: Array("{}".utf8))
        let strict = try #require(codes.headers["www-authenticate"], "\(codes.status)")
        #expect(codes.status == 401 && strict.contains(#"acr_values="phr""#) && strict.contains(#"max_age="300""#), "\(strict)")
    }
}

/// `phrh`: a passkey whose attestation chained to one of the operator's trust anchors and that
/// cannot be backed up (WebAuthn L3 §6.1.3 BE=0).
@Suite struct HardwareBoundTests {
    let anchor: TestAttestationRoot
    let anchorFile: String
    let server: TestServer

    init() throws {
        anchor = try TestAttestationRoot(name: "Signet Test Security Keys")
        let file = try anchor.pemFile(in: Scratch.directory)
        anchorFile = file
        server = try TestServer.withOperators { c in
            c.trustAnchorFiles = [file]
            TestServer.webClients(&c)
        }
    }

    static func deviceBound(_ bound: Bool) -> SoftwareAuthenticator.Settings {
        var settings = SoftwareAuthenticator.Settings()
        settings.backupEligible = !bound
        settings.backupState = !bound
        return settings
    }

    @Test("an attested passkey that cannot be backed up signs up and in with amr hwk and acr phrh; an attested synced one gets phr; the row keeps attested")
    func tokens() throws {
        for (bound, amr, acr) in [(true, ["pop", "hwk", "user"], "phrh"), (false, ["pop", "user"], "phr")] {
            let phone = Phone(server, settings: Self.deviceBound(bound))
            let email = "hw-\(bound)@signet.test"
            let (session, credential) = try phone.startSignUp(email: email, tamper: anchor.packed)
            let signUp = try phone.exchange(session: session, credential: credential)
            #expect(signUp.status == 200, "\(signUp.json.serialized)")
            for tokens in [signUp.json, try phone.signIn()] {
                let access = jwtClaims(tokens["access_token"]?.string)
                #expect(access["amr"] == .array(amr.map(JSONValue.string)) && access["acr"] == .string(acr), "\(bound): \(access.serialized)")
                #expect(jwtClaims(tokens["id_token"]?.string)["acr"] == .string(acr))
            }
            let user = try #require(try server.store.user(email: email))
            let row = try #require(try server.store.credentials(userID: user.id).first)
            #expect(row.attested && row.isHardwareBound == bound)
            // The account's list says which passkeys sign in as hardware-bound.
            let listed = try server.get("/me/passkeys", headers: [("Authorization", "Bearer " + (try #require(signUp.json["access_token"]?.string)))])
            #expect(try StrictJSON().parse(listed.body)["passkeys"]?.array?.first?["hardware_bound"] == .bool(bound))
            // And so does the Management API's list of the account's methods.
            let methods = try server.get("/api/v2/users/\(user.id)/authentication-methods", headers: [("Authorization", "Bearer " + (try server.managementToken()))])
            let passkey = try StrictJSON().parse(methods.body).array?.first { $0["type"] == .string("passkey") }
            #expect(passkey?["hardware_bound"] == .bool(bound), "\(String(decoding: methods.body, as: UTF8.self))")
            // And signet admin users show, from the database, with the same trust anchors.
            let shown = try runProcess(ProcessTests.binary.path, ["admin", "users", "show", user.id, "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                       environment: ["SIGNET_TRUST_ANCHORS": anchorFile], in: server.directory)
            #expect(shown.status == 0 && shown.output.contains("passkey (hardware-bound)") == bound, "\(shown.output)\(shown.errors)")
            #expect(row.attestationRoot == Digest.sha256.hash(anchor.certificate.der), "the row names the anchor it chained to")
        }
    }

    @Test("an anchor taken out of trust_anchors takes its passkeys' hardware mark with it, at the next start: phr, not hardware_bound; put back, phrh again")
    func anchorRemoved() throws {
        let phone = Phone(server, settings: Self.deviceBound(true))
        let (session, credential) = try phone.startSignUp(email: "withdrawn-root@signet.test", tamper: anchor.packed)
        #expect(jwtClaims(try phone.exchange(session: session, credential: credential).json["access_token"]?.string)["acr"] == .string("phrh"))
        // Another instance on the same database, whose operator trusts another vendor only.
        let other = try TestAttestationRoot(name: "Another Vendor")
        let otherFile = try other.pemFile(in: Scratch.directory)
        for (files, acr, bound) in [([otherFile], "phr", false), ([], "phr", false), ([otherFile, anchorFile], "phrh", true)] {
            let instance = try TestServer.withOperators(sharing: server.directory) { c in c.trustAnchorFiles = files }
            var signedIn = phone
            signedIn.server = instance
            let tokens = try signedIn.signIn()
            let access = jwtClaims(tokens["access_token"]?.string)
            #expect(access["acr"] == .string(acr) && (access["amr"]?.array?.contains(.string("hwk")) == bound), "\(files.count): \(access.serialized)")
            let listed = try instance.get("/me/passkeys", headers: [("Authorization", "Bearer " + (try #require(tokens["access_token"]?.string)))])
            #expect(try StrictJSON().parse(listed.body)["passkeys"]?.array?.first?["hardware_bound"] == .bool(bound))
        }
    }

    @Test("without a trust anchor a device-bound passkey is not known to be hardware: phr, and its row is not attested")
    func unattested() throws {
        let plain = try TestServer()
        let phone = Phone(plain, settings: Self.deviceBound(true))
        let tokens = try phone.signUp(email: "unattested@signet.test")
        #expect(jwtClaims(tokens["access_token"]?.string)["acr"] == .string("phr") && jwtClaims(tokens["access_token"]?.string)["amr"] == .array([.string("pop"), .string("user")]))
        let user = try #require(try plain.store.user(email: "unattested@signet.test"))
        #expect(try plain.store.credentials(userID: user.id).first?.attested == false)
    }

    @Test("acr_values=phrh: a synced passkey's session gets the page that asks for a device-bound one; a hardware-bound session answers phrh and phr alike")
    func authorize() throws {
        let synced = WebBrowser(server, authenticator: SoftwareAuthenticator(settings: Self.deviceBound(false)))
        try synced.signUp(email: "synced@signet.test", tamper: anchor.packed)
        let asked = try server.authorize(synced, extra: [("acr_values", "phrh")])
        let location = try #require(asked.headers["location"])
        #expect(location.hasPrefix("/login?authorization="), "\(location)")
        let page = try synced.page(location).html
        #expect(page.contains("data-testid=\"passkey-required\"") && page.contains("security key") && !page.contains("data-testid=\"send-code\""))
        #expect(try server.authorize(synced, extra: [("acr_values", "phrh phr")]).headers["location"]?.contains("code=") == true, "phr is among the values")
        #expect(WebBrowser.query(try server.authorize(synced, extra: [("acr_values", "phrh"), ("prompt", "none")]).headers["location"])["error"] == "login_required")

        #expect(try synced.page("/account").html.contains("synced") && !(try synced.page("/account").html.contains("hardware key")))
        let bound = WebBrowser(server, authenticator: SoftwareAuthenticator(settings: Self.deviceBound(true)))
        try bound.signUp(email: "bound@signet.test", tamper: anchor.packed)
        // The account page says which kind of passkey it is.
        #expect(try bound.page("/account").html.contains("hardware key, verified"))
        for wanted in ["phrh", "phr"] {
            let pkce = PKCE()
            let answer = try server.authorize(bound, pkce: pkce, extra: [("acr_values", wanted)])
            let code = try #require(WebBrowser.query(answer.headers["location"])["code"], "\(wanted): \(answer.headers)")
            let tokens = try server.exchange(code: code, verifier: pkce.verifier)
            #expect(jwtClaims(tokens.json["access_token"]?.string)["acr"] == .string("phrh"), "\(wanted): \(tokens.json.serialized)")
        }
    }
}
