import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// DESIGN.md, "Proof of possession" (RFC 9449): tokens bound to a key the phone holds.
@Suite struct DPoPTests {
    static let tokenURL = "https://signet.test/oauth/token"

    /// A passkey sign-up whose token request carries a proof by `key`.
    static func signUp(_ server: TestServer, email: String, key: SoftwareDPoPKey?, client: String = "app", proof: String? = nil) throws -> (status: Int, json: JSONValue, phone: Phone) {
        var phone = Phone(server)
        phone.clientID = client
        let (session, credential) = try phone.startSignUp(email: email)
        let header = try proof ?? key.map { try $0.proof(method: "POST", url: tokenURL) }
        let answer = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantNames.webauthn), "client_id": .string(client), "auth_session": .string(session), "authn_response": credential,
        ]), headers: header.map { [("DPoP", $0)] } ?? [])
        return (answer.status, answer.json, phone)
    }

    /// `GET path` with `Authorization: DPoP` and `proof` (default: a fresh one by `key` with `ath`).
    static func call(_ server: TestServer, _ path: String, token: String, key: SoftwareDPoPKey, proof: String? = nil) throws -> (status: Int, reason: String?, headers: [String: String]) {
        let header = try proof ?? key.proof(method: "GET", url: "https://signet.test" + path, accessToken: token)
        let response = try server.get(path, headers: [("Authorization", "DPoP " + token), ("DPoP", header)])
        return (response.status, (try? StrictJSON().parse(response.body))?["reason"]?.string, response.headers)
    }

    static func refresh(_ server: TestServer, _ token: JSONValue, proof: String?) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token]),
                        headers: proof.map { [("DPoP", $0)] } ?? [])
    }

    @Test("a sign-up with a proof: a DPoP token with cnf.jkt, accepted at /me with a proof by its key and refused as a bearer token", arguments: ["ES256", "EdDSA"])
    func boundToken(_ algorithm: String) throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey(algorithm: algorithm)
        let (status, tokens, _) = try Self.signUp(server, email: "ada@signet.test", key: key)
        #expect(status == 200 && tokens["token_type"] == .string("DPoP"), "\(tokens.serialized)")
        let access = try #require(tokens["access_token"]?.string)
        #expect(jwtClaims(access)["cnf"]?["jkt"] == .string(key.thumbprint))
        #expect(try Self.call(server, "/me/passkeys", token: access, key: key).status == 200)
        #expect(try Self.call(server, "/userinfo", token: access, key: key).status == 200)
        let bearer = try server.get("/me/passkeys", headers: [("Authorization", "Bearer " + access)])
        let bearerJSON = try StrictJSON().parse(bearer.body)
        #expect(bearer.status == 401 && bearerJSON["reason"] == .string("token_invalid"))
        #expect(bearer.headers["www-authenticate"]?.hasPrefix("DPoP") == true)
    }

    @Test("resource proofs: another key, a replayed jti, a wrong htu, htm or ath, a stale iat, none at all: each refused with its reason")
    func resourceRefusals() throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey()
        let access = try #require(try Self.signUp(server, email: "ada@signet.test", key: key).json["access_token"]?.string)
        let url = "https://signet.test/me/passkeys"
        let other = try SoftwareDPoPKey()
        let replayed = try key.proof(method: "GET", url: url, accessToken: access)
        #expect(try Self.call(server, "/me/passkeys", token: access, key: key, proof: replayed).status == 200)
        let cases: [(String, String, String)] = [
            ("another key", try other.proof(method: "GET", url: url, accessToken: access), "dpop_key_mismatch"),
            ("a replayed proof", replayed, "dpop_replayed"),
            ("a wrong htu", try key.proof(method: "GET", url: "https://signet.test/me/device-keys", accessToken: access), "dpop_invalid"),
            ("a wrong htm", try key.proof(method: "POST", url: url, accessToken: access), "dpop_invalid"),
            ("a wrong ath", try key.proof(method: "GET", url: url, accessToken: access + "x"), "dpop_invalid"),
            ("no ath", try key.proof(method: "GET", url: url), "dpop_invalid"),
            ("a stale iat", try key.proof(method: "GET", url: url, accessToken: access, iat: Int64(Date().timeIntervalSince1970) - 120), "dpop_invalid"),
            ("an iat in the future", try key.proof(method: "GET", url: url, accessToken: access, iat: Int64(Date().timeIntervalSince1970) + 120), "dpop_invalid"),
            ("a wrong typ", try key.proof(method: "GET", url: url, accessToken: access, type: "JWT"), "dpop_invalid"),
            ("garbage", "a.b.c", "dpop_invalid"),
        ]
        for (name, proof, reason) in cases {
            let answer = try Self.call(server, "/me/passkeys", token: access, key: key, proof: proof)
            #expect(answer.status == 401 && answer.reason == reason, "\(name): \(answer)")
        }
        // The URL's query does not count (htu has none), and default ports are the same URL.
        #expect(try Self.call(server, "/me/passkeys?x=1", token: access, key: key, proof: try key.proof(method: "GET", url: "https://signet.test:443/me/passkeys", accessToken: access)).status == 200)
        let none = try server.get("/me/passkeys", headers: [("Authorization", "DPoP " + access)])
        let noneJSON = try StrictJSON().parse(none.body)
        #expect(none.status == 401 && noneJSON["reason"] == .string("dpop_invalid"))
    }

    @Test("one account's resource proofs at an instance are bounded by dpop.proofs_per_minute: past it 429 rate_limited with Retry-After; others go on; room comes back")
    func proofBudget() throws {
        let server = try TestServer { $0.dpopProofsPerMinute = 3 }
        let (key, other) = (try SoftwareDPoPKey(), try SoftwareDPoPKey())
        let access = try #require(try Self.signUp(server, email: "ada@signet.test", key: key).json["access_token"]?.string)
        let otherAccess = try #require(try Self.signUp(server, email: "bob@signet.test", key: other).json["access_token"]?.string)
        func proof(_ key: SoftwareDPoPKey, _ token: String) throws -> String {
            try key.proof(method: "GET", url: "https://signet.test/userinfo", accessToken: token, iat: Int64(server.clock.now.timeIntervalSince1970))
        }
        let first = try proof(key, access)
        #expect(try Self.call(server, "/userinfo", token: access, key: key, proof: first).status == 200)
        for _ in 0..<2 { #expect(try Self.call(server, "/userinfo", token: access, key: key, proof: try proof(key, access)).status == 200) }
        let refused = try Self.call(server, "/userinfo", token: access, key: key, proof: try proof(key, access))
        #expect(refused.status == 429 && refused.reason == "rate_limited", "\(refused)")
        #expect((1...61).contains(Int(refused.headers["retry-after"] ?? "") ?? 0), "\(refused.headers)")
        #expect(try Self.call(server, "/userinfo", token: access, key: key, proof: first).reason == "dpop_replayed")
        #expect(try Self.call(server, "/userinfo", token: otherAccess, key: other, proof: try proof(other, otherAccess)).status == 200)
        server.clock.advance(Double(DPoP.window) + 2)
        #expect(try Self.call(server, "/userinfo", token: access, key: key, proof: try proof(key, access)).status == 200)
    }

    @Test("proofs as RFC 9449 §4.3 and RFC 7515 word them: crit refused, an iat with a fraction taken, htu compared after RFC 3986 normalization")
    func proofForms() throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey()
        let access = try #require(try Self.signUp(server, email: "ada@signet.test", key: key).json["access_token"]?.string)
        let now = Date().timeIntervalSince1970
        func claims(_ htu: String, iat: String = String(Int64(now))) -> String {
            #"{"htm":"GET","htu":"\#(htu)","iat":\#(iat),"jti":"\#(Base64URL.encode(SecureRandom.bytes(16)))","ath":"\#(Base64URL.encode(Digest.sha256.hash(Array(access.utf8))))"}"#
        }
        let url = "https://signet.test/me/passkeys"
        let cases: [(String, String, String, Int)] = [
            ("as the SDK makes it", "", claims(url), 200),
            ("crit naming an extension", #","crit":["exp"],"exp":1"#, claims(url), 401),
            ("crit naming nothing", #","crit":[]"#, claims(url), 401),
            ("an iat with a fraction", "", claims(url, iat: String(format: "%.3f", now)), 200),
            ("an iat with an exponent", "", claims(url, iat: "\(Int64(now) / 10)e1"), 200),
            ("an iat that is a string", "", claims(url, iat: "\"\(Int64(now))\""), 401),
            ("an escaped unreserved letter, lower-case hex", "", claims("https://signet.test/me/%70asskeys"), 200),
            ("upper-case scheme and host", "", claims("HTTPS://SIGNET.TEST/me/passkeys"), 200),
            ("dot segments", "", claims("https://signet.test/me/x/../passkeys"), 200),
            ("an escaped slash", "", claims("https://signet.test/me%2Fpasskeys"), 401),
            ("a broken escape", "", claims("https://signet.test/me/%7passkeys"), 401),
            ("a path's case", "", claims("https://signet.test/me/Passkeys"), 401),
            ("dot segments that end elsewhere", "", claims("https://signet.test/me/passkeys/.."), 401),
        ]
        let jwk = "{" + key.jwk.map { #""\#($0.0)":"\#($0.1)""# }.joined(separator: ",") + "}"
        for (name, header, payload, status) in cases {
            let proof = try Self.signed(key, header: #"{"alg":"ES256","jwk":\#(jwk),"typ":"dpop+jwt"\#(header)}"#, claims: payload)
            let answer = try Self.call(server, "/me/passkeys", token: access, key: key, proof: proof)
            #expect(answer.status == status, "\(name): \(answer)")
            if status == 401 { #expect(answer.reason == "dpop_invalid", "\(name)") }
        }
    }

    @Test("a path that arrives escaped: a proof for its escaped URL passes; one for no URL, or for another path, does not")
    func escapedPath() throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey()
        let access = try #require(try Self.signUp(server, email: "ada@signet.test", key: key).json["access_token"]?.string)
        var path = "/me/passkeys/a%20b%C3%A9"
        func rename(_ htu: String) throws -> (status: Int, reason: String?) {
            let proof = try key.proof(method: "PATCH", url: htu, accessToken: access)
            let answer = try server.send("PATCH", path, headers: [("Authorization", "DPoP " + access), ("DPoP", proof)], body: Array(#"{"name":"x"}"#.utf8))
            return (answer.status, (try? StrictJSON().parse(answer.body))?["reason"]?.string)
        }
        // Past DPoP: no passkey has that ID.
        let escaped = try rename("https://signet.test" + path)
        #expect(escaped.status == 404, "\(escaped)")
        #expect(try rename("https://signet.test/me/passkeys/a%20b%c3%a9").status == 404, "escapes' case does not matter (RFC 3986 §6.2.2.1)")
        for notURL in ["not a url", "https://signet.test/me/passkeys/ab"] {
            let refused = try rename(notURL)
            #expect(refused.status == 401 && refused.reason == "dpop_invalid", "\(notURL): \(refused)")
        }
        // A path holding an escaped `%`: its own escaped form passes, another path with a broken escape does not.
        path = "/me/passkeys/%25zz"
        #expect(try rename("https://signet.test/me/passkeys/%25zz").status == 404)
        let broken = try rename("https://signet.test/elsewhere/%zz")
        #expect(broken.status == 401 && broken.reason == "dpop_invalid", "\(broken)")
    }

    @Test("a token presented with the DPoP scheme is refused with DPoP's challenge; without a token both schemes are offered")
    func challenges() throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey()
        let access = try #require(try Self.signUp(server, email: "ada@signet.test", key: key).json["access_token"]?.string)
        let algs = #"algs="ES256 EdDSA""#
        let garbage = try Self.call(server, "/userinfo", token: "abc", key: key)
        #expect(garbage.status == 401 && garbage.reason == "token_invalid" && garbage.headers["www-authenticate"] == #"DPoP error="invalid_token", \#(algs)"#)
        let none = try server.get("/me/passkeys")
        #expect(none.status == 401 && none.headers["www-authenticate"] == "Bearer, DPoP \(algs)")
        // The Management API takes bearer tokens only, so it offers only that scheme.
        #expect(try server.get("/api/v2/users").headers["www-authenticate"] == "Bearer")
        // Step-up (RFC 9470) for a DPoP-bound token: the same parameters under the DPoP scheme.
        server.clock.advance(301)
        let proof = try key.proof(method: "POST", url: "https://signet.test/me/recovery-codes", accessToken: access, iat: Int64(server.clock.now.timeIntervalSince1970))
        let stale = try server.send("POST", "/me/recovery-codes", headers: [("Authorization", "DPoP " + access), ("DPoP", proof)], body: Array("{}".utf8))
        #expect(stale.status == 401 && stale.headers["www-authenticate"]?.hasPrefix(#"DPoP error="insufficient_user_authentication""#) == true, "\(stale.headers)")
        #expect(stale.headers["www-authenticate"]?.hasSuffix(#"max_age="300", \#(algs)"#) == true)
    }

    /// A compact JWS of `header` and `claims` as given, signed by `key` (ES256).
    static func signed(_ key: SoftwareDPoPKey, header: String, claims: String) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let raw = try #require(ECDSASignature.raw(fromDER: try key.signDER(Array(input.utf8)), width: 32))
        return input + "." + Base64URL.encode(raw)
    }

    @Test("token-endpoint proofs: single use, the right htu and method, a public JWK only, the client's dpop: required")
    func tokenEndpointRefusals() throws {
        let server = try TestServer { c in
            var strict = ClientConfiguration(id: "strict", grants: GrantNames.all)
            strict.dpop = "required"
            c.clients.append(strict)
        }
        let key = try SoftwareDPoPKey()
        let used = try key.proof(method: "POST", url: Self.tokenURL)
        #expect(try Self.signUp(server, email: "a@signet.test", key: key, proof: used).status == 200)
        let cases: [(String, String, String)] = [
            ("a replayed proof", used, "dpop_replayed"),
            ("the wrong htu", try key.proof(method: "POST", url: "https://signet.test/oauth/revoke"), "dpop_invalid"),
            ("the wrong htm", try key.proof(method: "GET", url: Self.tokenURL), "dpop_invalid"),
            ("a stale iat", try key.proof(method: "POST", url: Self.tokenURL, iat: Int64(Date().timeIntervalSince1970) - 61), "dpop_invalid"),
            ("a private key in the jwk", try Self.withPrivateMember(key.proof(method: "POST", url: Self.tokenURL)), "dpop_invalid"),
            ("two proofs", used + ", " + used, "dpop_invalid"),
        ]
        for (n, (name, proof, reason)) in cases.enumerated() {
            let answer = try Self.signUp(server, email: "b\(n)@signet.test", key: key, proof: proof)
            #expect(answer.status == 400 && answer.json["reason"] == .string(reason), "\(name): \(answer.json.serialized)")
            #expect(answer.json["error"] == .string("invalid_dpop_proof"))
        }
        #expect(try Self.signUp(server, email: "c@signet.test", key: nil, client: "strict").json["reason"] == .string("dpop_invalid"))
        #expect(try Self.signUp(server, email: "d@signet.test", key: key, client: "strict").json["token_type"] == .string("DPoP"))
        // Without a proof, as before: a bearer token.
        #expect(try Self.signUp(server, email: "e@signet.test", key: nil).json["token_type"] == .string("Bearer"))
    }

    @Test("dpop_jkt (RFC 9449 §10): the code is bound to the key; no proof or another key's uses it up; the key's proof gets tokens bound to it")
    func authorizationCodeBinding() throws {
        let server = try TestServer { c in TestServer.webClients(&c) }
        let browser = WebBrowser(server)
        try browser.signUp(email: "bound-code@signet.test")
        let key = try SoftwareDPoPKey(), other = try SoftwareDPoPKey()
        func code(_ pkce: PKCE, jkt: String? = key.thumbprint) throws -> String {
            let answer = try server.authorize(browser, pkce: pkce, extra: jkt.map { [("dpop_jkt", $0)] } ?? [])
            return try #require(WebBrowser.query(answer.headers["location"])["code"], "\(answer.headers)")
        }
        func exchange(_ code: String, _ pkce: PKCE, proof: String?) throws -> (status: Int, json: JSONValue) {
            try server.exchange(code: code, verifier: pkce.verifier, headers: proof.map { [("DPoP", $0)] } ?? [])
        }
        // Without a proof, or with another key's, refused, and the code is used up.
        for (name, proof, reason) in [("no proof", nil, "dpop_invalid"), ("another key", try other.proof(method: "POST", url: Self.tokenURL), "dpop_key_mismatch")] {
            let pkce = PKCE()
            let bound = try code(pkce)
            let refused = try exchange(bound, pkce, proof: proof)
            #expect(refused.status == 400 && refused.json["reason"] == .string(reason) && refused.json["error"] == .string("invalid_dpop_proof"), "\(name): \(refused.json.serialized)")
            let again = try exchange(bound, pkce, proof: try key.proof(method: "POST", url: Self.tokenURL))
            #expect(again.json["reason"] == .string("code_invalid"), "\(name): the code was used up: \(again.json.serialized)")
        }
        // The key's own proof: tokens bound to it.
        let pkce = PKCE()
        let tokens = try exchange(try code(pkce), pkce, proof: try key.proof(method: "POST", url: Self.tokenURL))
        #expect(tokens.status == 200 && tokens.json["token_type"] == .string("DPoP"), "\(tokens.json.serialized)")
        #expect(jwtClaims(tokens.json["access_token"]?.string)["cnf"]?["jkt"] == .string(key.thumbprint))
        // A code without dpop_jkt is unbound, as before: a bearer exchange works.
        let plain = PKCE()
        #expect(try exchange(try code(plain, jkt: nil), plain, proof: nil).json["token_type"] == .string("Bearer"))
        // A dpop_jkt that is not a SHA-256 thumbprint goes back to the client.
        for bad in ["", "abc", String(repeating: "A", count: 44), String(repeating: "=", count: 43)] {
            let refused = try server.authorize(browser, extra: [("dpop_jkt", bad)])
            #expect(WebBrowser.query(refused.headers["location"])["error"] == "invalid_request", "\(bad): \(refused.headers)")
        }
    }

    /// The proof with `"d"` added to its header's JWK (and so an invalid signature too; the JWK
    /// check comes first).
    static func withPrivateMember(_ proof: String) throws -> String {
        let parts = proof.split(separator: ".").map(String.init)
        var header = try #require(try StrictJSON().parse(Base64URL.decode(parts[0]) ?? []).object)
        var jwk = try #require(header["jwk"]?.object)
        jwk["d"] = .string("AAAA")
        header["jwk"] = .object(jwk)
        return Base64URL.encode(Array(JSONValue.object(header).serialized.utf8)) + "." + parts[1] + "." + parts[2]
    }

    @Test("a public client's refresh token is bound: refused without a proof or with another key (and not used up), rotated with its key's proof")
    func boundRefresh() throws {
        let server = try TestServer()
        let key = try SoftwareDPoPKey()
        let tokens = try Self.signUp(server, email: "ada@signet.test", key: key).json
        let refresh = try #require(tokens["refresh_token"])
        let without = try Self.refresh(server, refresh, proof: nil)
        #expect(without.status == 400 && without.json["reason"] == .string("dpop_invalid"))
        let other = try Self.refresh(server, refresh, proof: try SoftwareDPoPKey().proof(method: "POST", url: Self.tokenURL))
        #expect(other.status == 400 && other.json["reason"] == .string("dpop_key_mismatch"))
        // Neither refusal used the token: its owner still refreshes, and the new one is bound too.
        let rotated = try Self.refresh(server, refresh, proof: try key.proof(method: "POST", url: Self.tokenURL))
        #expect(rotated.status == 200 && rotated.json["token_type"] == .string("DPoP"), "\(rotated.json.serialized)")
        #expect(jwtClaims(rotated.json["access_token"]?.string)["cnf"]?["jkt"] == .string(key.thumbprint))
        let next = try #require(rotated.json["refresh_token"])
        #expect(try Self.refresh(server, next, proof: nil).json["reason"] == .string("dpop_invalid"))
        #expect(try Self.refresh(server, next, proof: try key.proof(method: "POST", url: Self.tokenURL)).status == 200)
    }

    @Test("refresh_proof device_key: a refresh needs a proof by one of the account's live device keys; another key, none, or a revoked device key is refused")
    func refreshByDeviceKey() throws {
        let server = try TestServer { c in
            var vault = ClientConfiguration(id: "vault", grants: GrantNames.all)
            vault.refreshProof = "device_key"
            c.clients.append(vault)
        }
        let sessionKey = try SoftwareDPoPKey()
        let (status, tokens, phone) = try Self.signUp(server, email: "ada@signet.test", key: sessionKey, client: "vault")
        try #require(status == 200)
        let account = SignedIn(server, phone: phone, access: try #require(tokens["access_token"]?.string))
        let deviceKey = try SoftwareDeviceKey(deviceID: "phone")
        // The account's access token is DPoP-bound: its calls carry proofs by the session key.
        let enrolled = try server.send("POST", "/me/device-keys", headers: [
            ("Authorization", "DPoP " + account.access),
            ("DPoP", try sessionKey.proof(method: "POST", url: "https://signet.test/me/device-keys", accessToken: account.access)),
        ], body: Array(JSONValue.object(["public_key": .string(Base64URL.encode(deviceKey.publicKeySPKI)), "device_id": .string("phone"), "platform": .string("ios")]).serialized.utf8))
        #expect(enrolled.status == 201)
        let keyID = try #require(try StrictJSON().parse(enrolled.body)["id"]?.string)
        var refresh = try #require(tokens["refresh_token"])
        func refreshed(_ proof: String?) throws -> (status: Int, json: JSONValue) {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("vault"), "refresh_token": refresh]),
                            headers: proof.map { [("DPoP", $0)] } ?? [])
        }
        #expect(try refreshed(nil).json["reason"] == .string("dpop_invalid"))
        #expect(try refreshed(try sessionKey.proof(method: "POST", url: Self.tokenURL)).json["reason"] == .string("dpop_key_mismatch"))
        let device = SoftwareDPoPKey(deviceKey: deviceKey)
        let ok = try refreshed(try device.proof(method: "POST", url: Self.tokenURL))
        // The new access token stays bound to the session's key: the app's calls need no biometric check.
        #expect(ok.status == 200 && jwtClaims(ok.json["access_token"]?.string)["cnf"]?["jkt"] == .string(sessionKey.thumbprint), "\(ok.json.serialized)")
        refresh = try #require(ok.json["refresh_token"])
        // Revoked, the device key refreshes no more.
        #expect(try server.store.revokeDeviceKey(id: keyID, userID: try #require(jwtClaims(account.access)["sub"]?.string), at: 0))
        #expect(try refreshed(try device.proof(method: "POST", url: Self.tokenURL)).json["reason"] == .string("dpop_key_mismatch"))
    }

    @Test("across instances on one database: a token-endpoint proof works once, and a bound refresh token still needs its key")
    func acrossInstances() throws {
        let first = try TestServer()
        let second = try TestServer(sharing: first.directory)
        let key = try SoftwareDPoPKey()
        let proof = try key.proof(method: "POST", url: Self.tokenURL)
        let tokens = try Self.signUp(first, email: "ada@signet.test", key: key, proof: proof).json
        #expect(try Self.signUp(second, email: "bob@signet.test", key: key, proof: proof).json["reason"] == .string("dpop_replayed"))
        let refresh = try #require(tokens["refresh_token"])
        #expect(try Self.refresh(second, refresh, proof: nil).json["reason"] == .string("dpop_invalid"))
        #expect(try Self.refresh(second, refresh, proof: try SoftwareDPoPKey().proof(method: "POST", url: Self.tokenURL)).json["reason"] == .string("dpop_key_mismatch"))
        #expect(try Self.refresh(second, refresh, proof: try key.proof(method: "POST", url: Self.tokenURL)).status == 200)
    }

    @Test("with dpop.nonce a proof without Signet's nonce is refused with use_dpop_nonce and a DPoP-Nonce; the retry with it succeeds")
    func nonce() throws {
        let server = try TestServer { $0.dpopNonce = true }
        let key = try SoftwareDPoPKey()
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "ada@signet.test")
        let body = JSONValue.object(["grant_type": .string(GrantNames.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential])
        let first = try server.send("POST", "/oauth/token", headers: [("DPoP", try key.proof(method: "POST", url: Self.tokenURL))], body: Array(body.serialized.utf8))
        let firstJSON = try StrictJSON().parse(first.body)
        #expect(first.status == 400 && firstJSON["reason"] == .string("use_dpop_nonce"))
        let nonce = try #require(first.headers["dpop-nonce"])
        let wrong = try server.post("/oauth/token", body, headers: [("DPoP", try key.proof(method: "POST", url: Self.tokenURL, nonce: "forged"))])
        #expect(wrong.json["reason"] == .string("use_dpop_nonce"))
        let retry = try server.post("/oauth/token", body, headers: [("DPoP", try key.proof(method: "POST", url: Self.tokenURL, nonce: nonce))])
        #expect(retry.status == 200 && retry.json["token_type"] == .string("DPoP"), "\(retry.json.serialized)")
        // Discovery says which algorithms proofs may use.
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["dpop_signing_alg_values_supported"] == .array([.string("ES256"), .string("EdDSA")]))
    }

    @Test("an independent client (PyJWT and cryptography) signs in by email code with DPoP, calls /userinfo and refreshes", .enabled(if: SMTPServer.available && DPoPTests.pythonAvailable, "needs python3-jwt, python3-cryptography and python3-aiosmtpd"))
    func pythonClient() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(.socket, smtp: smtp)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scripts/dpop-client.py").standardized.path
        try server.startEmail("py@signet.test")
        let code = try smtp.code(for: "py@signet.test")
        let run = try runProcess("/usr/bin/python3", [script, "http://127.0.0.1:\(server.port)", "https://signet.test", "app", "py@signet.test", code])
        let report = try StrictJSON().parse(Array(run.output.utf8))
        #expect(run.status == 0, "\(report.serialized) \(run.errors)")
        #expect(report["token_type"] == .string("DPoP") && report["cnf_matches"] == .bool(true))
        #expect(report["userinfo_dpop"] == .number("200") && report["userinfo_bearer"] == .number("401"))
        #expect(report["userinfo_other_key"] == .string("dpop_key_mismatch") && report["userinfo_replayed"] == .string("dpop_replayed"))
        #expect(report["refresh_without_proof"] == .string("dpop_invalid") && report["refresh_with_proof"] == .number("200"))
    }

    static var pythonAvailable: Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import jwt, cryptography"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
