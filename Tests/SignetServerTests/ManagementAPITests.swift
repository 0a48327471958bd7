import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing

/// An operator's view (DESIGN.md, "Management API"): machine clients, Auth0's v2 paths and
/// shapes, and every refusal.
extension TestServer {
    static let opsSecret = "ops-secret-0123456789abcdefghijkl"
    static let readerSecret = "reader-secret-0123456789abcdefgh"

    /// A server with two machine clients: `ops` with every management scope, `reader` with
    /// `read:users` only. `sharing`: another test server's directory (a second instance).
    static func withOperators(_ transport: Transport = TestServer.defaultTransport, smtp: SMTPServer? = nil, sharing: URL? = nil, upkeep: TimeInterval = 60,
                              _ edit: @escaping (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer(transport, sharing: sharing, upkeep: upkeep) { c in
            if let smtp {
                c.email.smtpURL = smtp.url
                c.email.retryDelay = 1
            }
            var ops = ClientConfiguration(id: "ops", grants: [GrantNames.clientCredentials], secretHash: Digest.sha256.hash(Array(opsSecret.utf8)))
            ops.scopes = ManagementScope.allCases.map(\.rawValue)
            var reader = ClientConfiguration(id: "reader", grants: [GrantNames.clientCredentials], secretHash: Digest.sha256.hash(Array(readerSecret.utf8)))
            reader.scopes = ["read:users"]
            c.clients += [ops, reader]
            edit(&c)
        }
    }

    /// A `client_credentials` token, with the secret in `Authorization: Basic`.
    func managementToken(_ client: String = "ops", secret: String = TestServer.opsSecret, scope: String? = nil) throws -> String {
        var body = "grant_type=client_credentials"
        if let scope { body += "&scope=" + scope.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: ":", with: "%3A") }
        let response = try send("POST", "/oauth/token", headers: [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Basic " + Data("\(client):\(secret)".utf8).base64EncodedString()),
        ], body: Array(body.utf8))
        let json = try StrictJSON().parse(response.body)
        try #require(response.status == 200, "client_credentials: \(json.serialized)")
        return try #require(json["access_token"]?.string)
    }

    /// A Management API call with `token`.
    @discardableResult
    func api(_ method: String, _ path: String, token: String?, _ body: JSONValue? = nil) throws -> (status: Int, json: JSONValue) {
        let response = try send(method, path, headers: token.map { [("Authorization", "Bearer " + $0)] } ?? [], body: body.map { Array($0.serialized.utf8) } ?? [])
        return (response.status, (try? StrictJSON(maxLength: 16 << 20).parse(response.body)) ?? .null)
    }
}

@Suite struct ManagementAPITests {
    @Test("times are written to the millisecond they hold: each of 10,000 in a row reads back as itself")
    func timesExact() throws {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for ms in Int64(1_796_509_545_000)..<1_796_509_555_000 {
            let text = Ceremonies.iso(ms)
            #expect(text.count == 24 && text.hasSuffix("Z"), "\(text)")
            let back = Int64((try style.parse(text).timeIntervalSince1970 * 1000).rounded())
            if back != ms { Issue.record("\(ms) written \(text), read back \(back)"); break }
        }
        #expect(Ceremonies.iso(0) == "1970-01-01T00:00:00.000Z" && Ceremonies.iso(1_796_509_545_405) == "2026-12-05T22:25:45.405Z" && Ceremonies.iso(-1) == "1969-12-31T23:59:59.999Z")
    }

    @Test("client_credentials: secret by Basic or in the body, a Management API token with the client's scopes, no refresh token")
    func clientCredentials() throws {
        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        let claims = jwtClaims(token)
        #expect(claims["aud"] == .string("https://signet.test/api/v2/") && claims["sub"] == .string("ops@clients") && claims["gty"] == .string("client-credentials"))
        #expect(claims["scope"]?.string?.split(separator: " ").count == ManagementScope.allCases.count)
        // client_secret_post, JSON; a scope outside the client's own is dropped.
        let posted = try server.post("/oauth/token", .object([
            "grant_type": .string("client_credentials"), "client_id": .string("reader"), "client_secret": .string(TestServer.readerSecret),
            "scope": .string("read:users delete:users"),
        ]))
        #expect(posted.status == 200 && posted.json["scope"] == .string("read:users") && posted.json["token_type"] == .string("Bearer"))
        #expect(posted.json["refresh_token"] == nil && posted.json["id_token"] == nil)
        // Refusals: a wrong secret, none, both kinds at once, a public client, a client without the grant.
        func refused(_ body: JSONObject, _ headers: [(String, String)] = []) throws -> (Int, String?) {
            var merged: JSONObject = ["grant_type": .string("client_credentials")]
            for (name, value) in body { merged[name] = value }
            let answer = try server.post("/oauth/token", .object(merged), headers: headers)
            return (answer.status, answer.json["reason"]?.string)
        }
        #expect(try refused(["client_id": .string("ops"), "client_secret": .string("wrong")]) == (401, "client_secret_invalid"))
        #expect(try refused(["client_id": .string("ops")]) == (401, "client_secret_invalid"))
        #expect(try refused(["client_id": .string("ops"), "client_secret": .string(TestServer.opsSecret)],
                            [("Authorization", "Basic " + Data("ops:\(TestServer.opsSecret)".utf8).base64EncodedString())]) == (401, "client_secret_invalid"))
        #expect(try refused(["client_id": .string("app"), "client_secret": .string("x")]) == (401, "client_secret_invalid"))
        // RFC 6749 §5.2: a client that tried Authorization: Basic gets 401 with a Basic challenge,
        // whoever it claimed to be; one that posted its secret gets the same status.
        for credentials in ["ops:wrong", "nobody:x", "app:x", "ops:"] {
            let answer = try server.send("POST", "/oauth/token", headers: [("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString())],
                                         body: Array(#"{"grant_type":"client_credentials"}"#.utf8))
            #expect(answer.status == 401 && answer.headers["www-authenticate"] == #"Basic realm="signet""#, "\(credentials): \(answer.status) \(answer.headers)")
        }
        #expect(try refused(["client_id": .string("bank"), "client_secret": .string(TestServer.bankSecret)]) == (400, "grant_not_allowed"))
        #expect(try refused(["client_id": .string("ops"), "client_secret": .string(TestServer.opsSecret), "audience": .string("https://elsewhere")]) == (400, "audience_not_allowed"))
        // A user's grant can never ask for the Management API's audience.
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "ada@signet.test")
        let userGrant = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantNames.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
            "audience": .string("https://signet.test/api/v2/"),
        ]))
        #expect(userGrant.json["reason"] == .string("audience_not_allowed"))
    }

    @Test("every endpoint refuses no token, a user's token, a token without its scope, and names an unknown user 404")
    func refusals() throws {
        let server = try TestServer.withOperators()
        let user = try SignedIn(server, email: "ada@signet.test")
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        let ops = try server.managementToken()
        let id = try #require(jwtClaims(user.access)["sub"]?.string)
        let endpoints: [(String, String, JSONValue?, String)] = [
            ("GET", "/api/v2/users", nil, "read:users"), ("GET", "/api/v2/users/\(id)", nil, "read:users"),
            ("PATCH", "/api/v2/users/\(id)", .object(["name": .string("A")]), "update:users"), ("DELETE", "/api/v2/users/\(id)", nil, "delete:users"),
            ("GET", "/api/v2/users/\(id)/authentication-methods", nil, "read:authentication_methods"),
            ("GET", "/api/v2/users/\(id)/authentication-methods/email%7C\(id)", nil, "read:authentication_methods"),
            ("DELETE", "/api/v2/users/\(id)/authentication-methods/email%7C\(id)", nil, "delete:authentication_methods"),
            ("GET", "/api/v2/users/\(id)/sessions", nil, "read:sessions"), ("DELETE", "/api/v2/users/\(id)/sessions", nil, "delete:sessions"),
            ("GET", "/api/v2/users/\(id)/recovery", nil, "read:users"), ("DELETE", "/api/v2/users/\(id)/recovery", nil, "update:users"),
            ("GET", "/api/v2/users/\(id)/logs", nil, "read:logs"),
            ("GET", "/api/v2/user-blocks/\(id)", nil, "read:users"), ("DELETE", "/api/v2/user-blocks/\(id)", nil, "update:users"),
            ("GET", "/api/v2/sessions/nope", nil, "read:sessions"), ("DELETE", "/api/v2/sessions/nope", nil, "delete:sessions"),
            ("GET", "/api/v2/logs", nil, "read:logs"), ("GET", "/api/v2/logs/1", nil, "read:logs"),
            ("GET", "/api/v2/keys/signing", nil, "read:signing_keys"), ("GET", "/api/v2/keys/signing/k", nil, "read:signing_keys"),
            ("POST", "/api/v2/keys/signing/rotate", nil, "create:signing_keys"),
        ]
        for (method, path, body, scope) in endpoints {
            let none = try server.api(method, path, token: nil, body)
            #expect(none.status == 401 && none.json["reason"] == .string("token_missing"), "\(method) \(path)")
            let userToken = try server.api(method, path, token: user.access, body)
            #expect(userToken.status == 401 && userToken.json["reason"] == .string("token_audience_invalid"), "\(method) \(path)")
            let garbage = try server.api(method, path, token: "not.a.token", body)
            #expect(garbage.status == 401 && garbage.json["reason"] == .string("token_invalid"), "\(method) \(path)")
            if scope != "read:users" {
                let missing = try server.api(method, path, token: reader, body)
                #expect(missing.status == 403 && missing.json["reason"] == .string("insufficient_scope"), "\(method) \(path)")
            }
            if path.contains(id) {
                let unknown = try server.api(method, path.replacingOccurrences(of: id, with: "00000000-0000-4000-8000-000000000000"), token: ops, body)
                #expect(unknown.status == 404 && unknown.json["reason"] == .string("user_unknown"), "\(method) \(path)")
            }
        }
        // A removed client's token stops working at once.
        #expect(try server.api("GET", "/api/v2/users", token: reader).status == 200)
    }

    @Test("users: an address typed decomposed (u and a combining diaeresis) finds the account stored composed, exactly and by prefix")
    func searchNormalized() throws {
        let server = try TestServer.withOperators()
        _ = try SignedIn(server, email: "jürgen@signet.test")
        let ops = try server.managementToken()
        let exact = try server.api("GET", "/api/v2/users?q=email%3A%22JU%CC%88rgen%40signet.test%22", token: ops)
        #expect(exact.json.array?.compactMap { $0["email"]?.string } == ["jürgen@signet.test"], "\(exact.json.serialized)")
        #expect(try server.api("GET", "/api/v2/users?q=email:ju%CC%88*", token: ops).json.array?.count == 1)
    }

    @Test("users: search by exact address and by prefix, paging with totals, Auth0's user shape")
    func search() throws {
        let server = try TestServer.withOperators()
        var accounts: [String: SignedIn] = [:]
        for email in ["ada@signet.test", "adam@signet.test", "bob@signet.test", "a_b@signet.test"] { accounts[email] = try SignedIn(server, email: email) }
        let adam = try #require(accounts["adam@signet.test"])
        let ops = try server.managementToken()
        let exact = try server.api("GET", "/api/v2/users?q=email%3A%22ada%40signet.test%22", token: ops)
        #expect(exact.status == 200 && exact.json.array?.compactMap { $0["email"]?.string } == ["ada@signet.test"])
        let prefix = try server.api("GET", "/api/v2/users?q=email:ad*", token: ops)
        #expect(prefix.json.array?.compactMap { $0["email"]?.string } == ["ada@signet.test", "adam@signet.test"])
        // An underscore in a prefix is itself, not LIKE's wildcard.
        #expect(try server.api("GET", "/api/v2/users?q=email:a_*", token: ops).json.array?.count == 1)
        let page = try server.api("GET", "/api/v2/users?page=1&per_page=2&include_totals=true", token: ops)
        #expect(page.json["total"] == .number("4") && page.json["start"] == .number("2") && page.json["limit"] == .number("2") && page.json["length"] == .number("2"))
        #expect(page.json["users"]?.array?.compactMap { $0["email"]?.string } == ["bob@signet.test", "a_b@signet.test"])
        let user = try #require(exact.json.array?.first)
        for member in ["user_id", "email", "email_verified", "created_at", "updated_at", "last_login", "logins_count", "blocked", "name"] {
            #expect(user[member] != nil, "member \(member)")
        }
        #expect(user["logins_count"] == .number("1") && user["blocked"] == .bool(false) && user["created_at"]?.string?.hasSuffix("Z") == true)
        // sort=FIELD:1 or FIELD:-1 (Auth0's form), ties broken so pages never overlap.
        func emails(_ query: String) throws -> [String] { try server.api("GET", "/api/v2/users?" + query, token: ops).json.array?.compactMap { $0["email"]?.string } ?? [] }
        #expect(try emails("sort=email:1") == ["a_b@signet.test", "ada@signet.test", "adam@signet.test", "bob@signet.test"])
        #expect(try emails("sort=email:-1&per_page=2") == ["bob@signet.test", "adam@signet.test"])
        #expect(try emails("sort=email:-1&per_page=2&page=1") == ["ada@signet.test", "a_b@signet.test"])
        #expect(try emails("sort=created_at:-1") == ["a_b@signet.test", "bob@signet.test", "adam@signet.test", "ada@signet.test"])
        // The most recent sign-in first: a passkey sign-in counts, as last_login shows it.
        server.clock.advance(60)
        _ = try adam.phone.signIn()
        #expect(try emails("sort=last_login:-1&per_page=1") == ["adam@signet.test"])
        // fields picks members (include_fields=false leaves them out), in a list, with totals and for one user.
        let picked = try server.api("GET", "/api/v2/users?fields=user_id,email&q=email:ad*", token: ops).json.array ?? []
        #expect(picked.count == 2 && picked.allSatisfy { $0.object.map { Set($0.map(\.key)) } == ["user_id", "email"] })
        let left = try server.api("GET", "/api/v2/users?fields=name,%20logins_count&include_fields=false&include_totals=true", token: ops).json
        #expect(left["total"] == .number("4") && left["users"]?.array?.allSatisfy { $0["name"] == nil && $0["logins_count"] == nil && $0["email"] != nil } == true)
        let one = try server.api("GET", "/api/v2/users/\(try #require(user["user_id"]?.string))?fields=email", token: ops).json
        #expect(one == .object(["email": .string("ada@signet.test")]))
        for bad in ["q=name:ada", "q=email:ada", "q=email:%22a*%22", "per_page=0", "per_page=101", "page=-1", "page=x",
                    "sort=email", "sort=email:0", "sort=last_login", "sort=password:-1", "fields=email&include_fields=yes"] {
            let answer = try server.api("GET", "/api/v2/users?" + bad, token: ops)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(bad)")
        }
    }

    @Test("PATCH: name, email (unverified again, the old address told; the same address no change), email_verified; a taken address, an unknown member and an empty change are refused", arguments: [TestServer.Transport.inProcess, .socket])
    func patch(_ transport: TestServer.Transport) throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(transport, smtp: smtp)
        let ada = try SignedIn(server, email: "ada@signet.test")
        _ = try SignedIn(server, email: "bob@signet.test")
        let ops = try server.managementToken()
        let id = try #require(jwtClaims(ada.access)["sub"]?.string)
        let renamed = try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["name": .string("Ada L."), "email": .string("Ada@Example.com")]))
        #expect(renamed.status == 200 && renamed.json["name"] == .string("Ada L.") && renamed.json["email"] == .string("ada@example.com"))
        #expect(renamed.json["email_verified"] == .bool(false))
        #expect(eventually { smtp.messages(to: "ada@signet.test").contains { $0.kind == "email_changed" && $0.body.contains("ada@example.com") } })
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["email_verified": .bool(true)])).json["email_verified"] == .bool(true))
        // The address the account has, in another case, as a script sending the whole user does: no change, still verified, nobody told.
        let told = smtp.messages(to: "ada@example.com").count + smtp.messages(to: "ada@signet.test").count
        let same = try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["email": .string("ADA@example.com"), "name": .string("Ada L.")]))
        #expect(same.status == 200 && same.json["email"] == .string("ada@example.com") && same.json["email_verified"] == .bool(true), "\(same.json.serialized)")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(smtp.messages(to: "ada@example.com").count + smtp.messages(to: "ada@signet.test").count == told)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["email": .string("bob@signet.test")])).json["reason"] == .string("user_exists"))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["password": .string("hunter2")])).json["reason"] == .string("malformed"))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object([:])).json["reason"] == .string("malformed"))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["blocked": .string("yes")])).json["reason"] == .string("malformed"))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["email": .string("not an address")])).json["reason"] == .string("malformed"))
        // Each change is an audit event naming the client that made it.
        let logs = try server.api("GET", "/api/v2/logs?q=user_id:%22\(id)%22", token: ops).json.array ?? []
        #expect(logs.filter { $0["signet_event"] == .string("admin_user_updated") && $0["client_id"] == .string("ops") && $0["type"] == .string("sapi") }.count == 3)
    }

    @Test("a blocked user is refused at passkey sign-in, refresh and the account API, and its sessions are ended; unblocked, it signs in again")
    func blocked() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "ada@signet.test")
        let access = try #require(tokens["access_token"]?.string)
        let refresh = try #require(tokens["refresh_token"])
        let untouched = try #require(try phone.signIn()["refresh_token"])
        let id = try #require(jwtClaims(access)["sub"]?.string)
        let ops = try server.managementToken()
        let blocked = try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["blocked": .bool(true)]))
        #expect(blocked.status == 200 && blocked.json["blocked"] == .bool(true))
        let (session, credential, _) = try phone.startSignIn()
        let signIn = try phone.exchange(session: session, credential: credential)
        #expect(signIn.status == 403 && signIn.json["reason"] == .string("user_blocked"))
        let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": refresh]))
        #expect(refreshed.status == 403 && refreshed.json["reason"] == .string("user_blocked"))
        let me = try server.get("/me/passkeys", headers: [("Authorization", "Bearer " + access)])
        let meJSON = try StrictJSON().parse(me.body)
        #expect(me.status == 403 && meJSON["reason"] == .string("user_blocked"))
        #expect(try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array?.isEmpty == true)
        // The refused sign-in wrote nothing: no refresh token, no use of the passkey.
        #expect(try server.store.managedUser(id: id)?.loginsCount == 2)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["blocked": .bool(false)])).json["blocked"] == .bool(false))
        // A session from before the block, never presented meanwhile, ended with the block too.
        let ended = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": untouched]))
        #expect(ended.json["reason"] == .string("refresh_token_revoked"))
        #expect(try phone.signIn()["access_token"] != nil)
        // The family that blocking ended stays ended: its token, refused once while blocked, is
        // now a reused one.
        let old = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": refresh]))
        #expect(old.json["reason"] == .string("refresh_token_reused"))
        let kinds = (try server.api("GET", "/api/v2/logs", token: ops).json.array ?? []).compactMap { $0["signet_event"]?.string }
        #expect(kinds.contains("admin_user_blocked") && kinds.contains("admin_user_unblocked"))
    }

    @Test("a blocked user's correct email code is refused, and nothing of the sign-in is written", .enabled(if: SMTPServer.available, "needs python3-aiosmtpd"))
    func blockedEmailCode() throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(smtp: smtp)
        let ada = try SignedIn(server, email: "ada@signet.test")
        let id = try #require(jwtClaims(ada.access)["sub"]?.string)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: try server.managementToken(), .object(["blocked": .bool(true)])).status == 200)
        try server.startEmail("ada@signet.test")
        let code = try smtp.code(for: "ada@signet.test")
        let before = server.counts
        let refused = try server.signIn(email: "ada@signet.test", code: code, scope: "openid offline_access")
        #expect(refused.status == 403 && refused.json["reason"] == .string("user_blocked"))
        #expect(server.counts["refresh_tokens"] == before["refresh_tokens"])
        #expect(try server.store.managedUser(id: id)?.loginsCount == 1)
    }

    @Test("DELETE erases the user and every bound row in one transaction; the audit trail keeps only a pseudonym")
    func delete() throws {
        let server = try TestServer.withOperators()
        let ada = try SignedIn(server, email: "ada@signet.test")
        try ada.enroll(try SoftwareDeviceKey(deviceID: "phone"))
        #expect(try ada.call("POST", "/me/recovery-codes").status == 201)
        let bob = try SignedIn(server, email: "bob@signet.test")
        let id = try #require(jwtClaims(ada.access)["sub"]?.string)
        let ops = try server.managementToken()
        let before = server.counts
        #expect(try server.api("DELETE", "/api/v2/users/\(id)", token: ops).status == 204)
        let after = server.counts
        #expect(after["users"] == before["users"].map { $0 - 1 } && after["credentials"] == before["credentials"].map { $0 - 1 })
        #expect(after["device_keys"] == 0 && after["recovery_codes"] == 0)
        #expect(try server.store.sessions(userID: id, now: 0, SessionQuery(limit: 100)).isEmpty)
        let events = try server.store.auditEntries(AuditQuery(limit: 1000)).map(\.event)
        #expect(!events.contains { $0.userID == id })
        let pseudonymous = events.filter { $0.userID?.hasPrefix("deleted:") == true }
        #expect(pseudonymous.count >= 3 && pseudonymous.allSatisfy { $0.detail == nil })
        #expect(Set(pseudonymous.compactMap(\.userID)).count == 1)
        // The passkey no longer signs in, the address is free again, the other account is whole.
        let (session, credential, _) = try ada.phone.startSignIn()
        #expect(try ada.phone.exchange(session: session, credential: credential).json["reason"] == .string("credential_unknown"))
        #expect(try ada.call("GET", "/me/passkeys").status == 401)
        _ = try SignedIn(server, email: "ada@signet.test")
        #expect(try bob.call("GET", "/me/passkeys").status == 200)
        #expect(try server.api("DELETE", "/api/v2/users/\(id)", token: ops).json["reason"] == .string("user_unknown"))
        let log = try server.api("GET", "/api/v2/logs?take=5", token: ops).json.array ?? []
        #expect(log.contains { $0["type"] == .string("sdu") && $0["client_id"] == .string("ops") })
    }

    @Test("authentication methods: passkeys, device keys, email and recovery codes listed; each deletable kind deleted, with what it started")
    func authenticationMethods() throws {
        let server = try TestServer.withOperators()
        let ada = try SignedIn(server, email: "ada@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "phone")
        let keyID = try ada.enroll(key)
        #expect(try ada.call("POST", "/me/recovery-codes").status == 201)
        let id = try #require(jwtClaims(ada.access)["sub"]?.string)
        let ops = try server.managementToken()
        let methods = try server.api("GET", "/api/v2/users/\(id)/authentication-methods", token: ops).json.array ?? []
        #expect(methods.compactMap { $0["type"]?.string } == ["passkey", "device-key", "email", "recovery-code"])
        let passkey = try #require(methods.first?["id"]?.string)
        #expect(methods[1]["id"] == .string("device-key|" + keyID) && methods[1]["platform"] == .string("ios"))
        // Each by its ID, as the list has it.
        for method in methods {
            let one = try server.api("GET", "/api/v2/users/\(id)/authentication-methods/" + (method["id"]?.string ?? "").replacingOccurrences(of: "|", with: "%7C"), token: ops)
            #expect(one.status == 200 && one.json == method, "\(one.json.serialized)")
        }
        // The recovery codes, then the device key, then the passkey: even the last one.
        for method in ["recovery-code|" + id, "device-key|" + keyID] {
            #expect(try server.api("DELETE", "/api/v2/users/\(id)/authentication-methods/" + method.replacingOccurrences(of: "|", with: "%7C"), token: ops).status == 204)
        }
        let revoked = try ada.challenge(keyID)
        #expect(revoked.status >= 400, "\(revoked.json.serialized)")
        #expect(try server.api("DELETE", "/api/v2/users/\(id)/authentication-methods/" + passkey.replacingOccurrences(of: "|", with: "%7C"), token: ops).status == 204)
        // The session the passkey started ends with it, and it signs in no more.
        #expect(try ada.call("GET", "/me/passkeys").status == 401)
        let (session, credential, _) = try ada.phone.startSignIn()
        #expect(try ada.phone.exchange(session: session, credential: credential).json["reason"] == .string("credential_revoked"))
        let left = try server.api("GET", "/api/v2/users/\(id)/authentication-methods", token: ops).json.array ?? []
        #expect(left.compactMap { $0["type"]?.string } == ["email"])
        let email = try server.api("DELETE", "/api/v2/users/\(id)/authentication-methods/email%7C\(id)", token: ops)
        #expect(email.status == 400 && email.json["reason"] == .string("malformed"))
        for unknown in [passkey, "device-key|nope", "recovery-code|" + id, "password|x", "garbage"] {
            for method in ["GET", "DELETE"] {
                let answer = try server.api(method, "/api/v2/users/\(id)/authentication-methods/" + unknown.replacingOccurrences(of: "|", with: "%7C"), token: ops)
                #expect(answer.status == 404 && answer.json["reason"] == .string("authentication_method_unknown"), "\(method) \(unknown)")
            }
        }
    }

    @Test("sessions: listed per refresh family; revoke-all ends them at once, for refresh and for the account API")
    func sessions() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let first = try phone.signUp(email: "ada@signet.test")
        let second = try phone.signIn()
        let id = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        let ops = try server.managementToken()
        let list = try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array ?? []
        #expect(list.count == 2 && list.allSatisfy { $0["clients"]?.array?.first?["client_id"] == .string("app") && $0["user_id"] == .string(id) })
        #expect(list.first?["authentication"]?["methods"]?.array?.compactMap { $0["name"]?.string }.contains("pop") == true)
        #expect(try server.api("DELETE", "/api/v2/users/\(id)/sessions", token: ops).status == 204)
        #expect(try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array?.isEmpty == true)
        for tokens in [first, second] {
            let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"])]))
            #expect(refreshed.json["reason"] == .string("refresh_token_revoked"))
            let me = try server.get("/me/passkeys", headers: [("Authorization", "Bearer " + (tokens["access_token"]?.string ?? ""))])
            #expect(me.status == 401)
        }
        // A new sign-in starts a new session.
        _ = try phone.signIn()
        #expect(try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array?.count == 1)
    }

    @Test("an app's session keeps where it signed in and where it last refreshed: the Management API's device, /me/sessions and the account page")
    func appSessionOrigin() throws {
        // In process: the test says which address each request comes from (X-Test-Remote).
        let server = try TestServer.withOperators(.inProcess)
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        let signIn = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
        ]), headers: [("User-Agent", "ExampleBank/3.1 CFNetwork/1568.100.1 Darwin/24.0.0"), ("X-Test-Remote", "203.0.113.7")])
        try #require(signIn.status == 200, "\(signIn.json.serialized)")
        let sid = try #require(jwtClaims(signIn.json["access_token"]?.string)["sid"]?.string)
        let id = try #require(jwtClaims(signIn.json["access_token"]?.string)["sub"]?.string)
        let ops = try server.managementToken()
        func device() throws -> JSONValue? { try server.api("GET", "/api/v2/sessions/\(sid)", token: ops).json["device"] }
        #expect(try device() == .object(["initial_user_agent": .string("ExampleBank/3.1 CFNetwork/1568.100.1 Darwin/24.0.0"), "initial_ip": .string("203.0.113.7"),
                                         "last_user_agent": .string("ExampleBank/3.1 CFNetwork/1568.100.1 Darwin/24.0.0"), "last_ip": .string("203.0.113.7")]))
        // A refresh from elsewhere, a User-Agent far too long: the last are the refresh's, cut to 300 characters.
        let long = "ExampleBank/3.2 " + String(repeating: "é", count: 400)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(signIn.json["refresh_token"]),
        ]), headers: [("User-Agent", long), ("X-Test-Remote", "198.51.100.9")])
        try #require(refreshed.status == 200, "\(refreshed.json.serialized)")
        let after = try #require(try device())
        #expect(after["initial_ip"] == .string("203.0.113.7") && after["last_ip"] == .string("198.51.100.9"))
        #expect(after["last_user_agent"] == .string(String(long.prefix(300))) && after["initial_user_agent"]?.string?.hasPrefix("ExampleBank/3.1") == true)
        // The list has the same; the owner's own list shows where it signed in.
        let listed = try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array?.first { $0["id"] == .string(sid) }
        #expect(listed?["device"] == after)
        let mine = try server.send("GET", "/me/sessions", headers: [("Authorization", "Bearer " + (refreshed.json["access_token"]?.string ?? ""))])
        let own = try StrictJSON().parse(mine.body)["sessions"]?.array?.first { $0["id"] == .string(sid) }
        #expect(mine.status == 200 && own?["address"] == .string("203.0.113.7") && own?["kind"] == .string("app"), "\(String(decoding: mine.body, as: UTF8.self))")
        // The account page says so too.
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        let page = try browser.page("/account").html
        #expect(page.contains("signed in from 203.0.113.7"), "\(page)")
    }

    @Test("one session: browsers' and apps' listed with their kind; read and ended by ID, the others going on; unknown, ended and expired IDs are session_not_found", arguments: [TestServer.Transport.inProcess, .socket])
    func oneSession(_ transport: TestServer.Transport) throws {
        let server = try TestServer.withOperators(transport)
        let phone = Phone(server)
        let first = try phone.signUp(email: "ada@signet.test")
        let second = try phone.signIn()
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        let id = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        let firstSID = try #require(jwtClaims(first["access_token"]?.string)["sid"]?.string)
        let secondSID = try #require(jwtClaims(second["access_token"]?.string)["sid"]?.string)
        let ops = try server.managementToken()
        func sessions() throws -> [JSONValue] { try server.api("GET", "/api/v2/users/\(id)/sessions", token: ops).json["sessions"]?.array ?? [] }

        let list = try sessions()
        let browsers = list.filter { $0["kind"] == .string("browser") }, apps = list.filter { $0["kind"] == .string("app") }
        #expect(list.count == 3 && browsers.count == 1 && Set(apps.compactMap { $0["id"]?.string }) == [firstSID, secondSID])
        let web = try #require(browsers.first)
        #expect(web["clients"] == .array([]) && web["user_id"] == .string(id) && web["device"]?["initial_user_agent"]?.string?.contains("Chrome") == true)
        #expect(web["device"]?["initial_ip"]?.string?.isEmpty == false && web["authentication"]?["methods"]?.array?.isEmpty == false)
        let idle = try #require(web["idle_expires_at"]?.string), absolute = try #require(web["expires_at"]?.string)
        #expect(idle < absolute && (web["last_interacted_at"]?.string ?? "") < idle, "ISO 8601 times compare as text")
        #expect(apps.allSatisfy { $0["idle_expires_at"] == nil && $0["device"]?["initial_ip"] == .string("127.0.0.1") && $0["clients"]?.array?.first?["client_id"] == .string("app") })

        // Read by ID: the same object the list has.
        let read = try server.api("GET", "/api/v2/sessions/\(firstSID)", token: ops)
        #expect(read.status == 200 && read.json == apps.first { $0["id"] == .string(firstSID) }, "\(read.json.serialized)")
        #expect(try server.api("GET", "/api/v2/sessions/\(try #require(web["id"]?.string))", token: ops).json == web)

        // Ending the first app session: its refresh and access tokens are refused; the second goes on.
        #expect(try server.api("DELETE", "/api/v2/sessions/\(firstSID)", token: ops).status == 204)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(first["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"), "\(refreshed.json.serialized)")
        #expect(try SignedIn(server, phone: phone, access: try #require(first["access_token"]?.string)).call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        let kept = SignedIn(server, phone: phone, access: try #require(second["access_token"]?.string))
        #expect(try kept.call("GET", "/me/passkeys").status == 200)
        for method in ["GET", "DELETE"] {
            let gone = try server.api(method, "/api/v2/sessions/\(firstSID)", token: ops)
            #expect(gone.status == 404 && gone.json["reason"] == .string("session_not_found"), "\(method): \(gone.json.serialized)")
        }
        // Ending the browser's: the page signs in again; the app session is left.
        let webID = try #require(web["id"]?.string)
        #expect(try server.api("DELETE", "/api/v2/sessions/\(webID)", token: ops).status == 204)
        #expect(try browser.page("/account").status == 303)
        #expect(try sessions().compactMap { $0["id"]?.string } == [secondSID])
        #expect(try kept.call("GET", "/me/passkeys").status == 200)
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "admin_session_revoked" }
        #expect(audited.count == 2 && Set(audited.compactMap(\.detail)) == ["session \(firstSID)", "session \(webID)"])
        #expect(audited.allSatisfy { $0.userID == id && $0.clientID == "ops" })

        // Never a session, or not one any more: the same 404, and nothing ended. Over a socket the
        // HTTP layer refuses a NUL in the path before any route (400 malformed).
        for unknown in ["nope", String(repeating: "a", count: 300), "%00", "%E2%80%AE"] {
            let (status, reason) = unknown == "%00" && transport == .socket ? (400, "malformed") : (404, "session_not_found")
            for method in ["GET", "DELETE"] {
                let answer = try server.api(method, "/api/v2/sessions/\(unknown)", token: ops)
                #expect(answer.status == status && answer.json["reason"] == .string(reason), "\(method) \(unknown.prefix(20)): \(answer.json.serialized)")
            }
        }
        server.clock.advance(Double(server.app.configuration.refreshTokenLifetime + 1))
        let fresh = try server.managementToken()
        #expect(try server.api("GET", "/api/v2/sessions/\(secondSID)", token: fresh).json["reason"] == .string("session_not_found"))
        #expect(try server.api("DELETE", "/api/v2/sessions/\(secondSID)", token: fresh).json["reason"] == .string("session_not_found"))
        #expect(try server.store.auditEvents(limit: 50).filter { $0.kind == "admin_session_revoked" }.count == 2)
    }

    @Test("logs: newest first, then checkpoint paging after a log_id, oldest first; Auth0's type codes; take bounded; q by account, type and event; one by its log_id", arguments: [TestServer.Transport.inProcess, .socket])
    func logs(_ transport: TestServer.Transport) throws {
        let server = try TestServer.withOperators(transport)
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@signet.test")
        _ = try phone.signIn()
        let ops = try server.managementToken()
        let newest = try server.api("GET", "/api/v2/logs?take=100", token: ops).json.array ?? []
        let ids = newest.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
        #expect(ids.count >= 3 && ids == ids.sorted(by: >))
        let types = newest.compactMap { $0["type"]?.string }
        #expect(types.contains("ss") && types.contains("s") && types.contains("seccft"))
        // Checkpoint paging: from the oldest, two at a time, every event once, in order.
        var seen: [Int64] = []
        var from = "0"
        while true {
            let page = try server.api("GET", "/api/v2/logs?from=\(from)&take=2", token: ops).json.array ?? []
            if page.isEmpty { break }
            seen += page.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
            from = page.last?["log_id"]?.string ?? ""
        }
        #expect(seen.count >= ids.count && Array(seen.prefix(ids.count)) == ids.reversed())
        for bad in ["take=0", "take=101", "from=abc", "q=type:s", #"q=colour:"blue""#, #"q=type:"s" AND type:"f""#, #"q=signet_event:"sign_in_please""#,
                    #"q=type:"s"AND user_id:"x""#, #"q=type:"""#, #"q=user_id:"a"b""#, "q=type:%22" + String(repeating: "s", count: 300) + "%22"] {
            let query = bad.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: " ", with: "%20")
            #expect(try server.api("GET", "/api/v2/logs?" + query, token: ops).json["reason"] == .string("malformed"), "\(bad)")
        }
        // And a counter per audit event type on /metrics.
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"signet_audit_events_total{event="sign_up",outcome="success"} 1"#))
        #expect(metrics.contains(#"signet_audit_events_total{event="client_credentials",outcome="success"}"#))
        // q narrows by account, by the log's type and by Signet's event name, alone or together.
        let (session, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
        #expect(try phone.exchange(session: session, credential: credential).status != 200, "a replay: a failed sign-in")
        let other = Phone(server)
        _ = try other.signUp(email: "bob@signet.test")
        let ada = try #require(newest.first { $0["signet_event"] == .string("sign_up") }?["user_id"]?.string)
        func narrowed(_ q: String) throws -> [JSONValue] {
            let encoded = q.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: " ", with: "%20")
            let answer = try server.api("GET", "/api/v2/logs?take=100&q=" + encoded, token: ops)
            try #require(answer.status == 200, "\(q): \(answer.json.serialized)")
            return answer.json.array ?? []
        }
        func events(_ rows: [JSONValue]) -> Set<String> { Set(rows.compactMap { $0["signet_event"]?.string }) }
        let failed = try narrowed(#"type:"f""#)
        #expect(!failed.isEmpty && failed.allSatisfy { $0["type"] == .string("f") && $0["outcome"] == .string("failure") })
        let signUps = try narrowed(#"signet_event:"sign_up""#)
        #expect(signUps.count == 2 && events(signUps) == ["sign_up"])
        #expect(try narrowed(#"signet_event:"sign_up" AND user_id:"\#(ada)""#).count == 1)
        #expect(try narrowed(#"type:"s" AND user_id:"\#(ada)""#).allSatisfy { $0["user_id"] == .string(ada) && $0["type"] == .string("s") })
        #expect(try narrowed(#"type:"f" AND signet_event:"sign_in""#).allSatisfy { $0["signet_event"] == .string("sign_in") && $0["outcome"] == .string("failure") })
        #expect(try narrowed(#"type:"ss" AND signet_event:"sign_in""#).isEmpty, "no sign-in has the sign-up's code")
        // An event Auth0 has no code for has its own name as its type.
        try SignedIn(server, email: "carol@signet.test").enroll(try SoftwareDeviceKey(deviceID: "carol"))
        let enrolled = try narrowed(#"type:"device_key_enrolled""#)
        #expect(enrolled.count == 1 && enrolled.first?["type"] == .string("device_key_enrolled"), "\(enrolled)")
        let machine = try narrowed(#"type:"seccft""#)
        #expect(!machine.isEmpty && events(machine) == ["client_credentials"])
        #expect(try narrowed(#"type:"no_such_code""#).isEmpty)

        // One event by its log_id: the object the list has; anything else is log_not_found.
        for event in try server.api("GET", "/api/v2/logs?take=5", token: ops).json.array ?? [] {
            let one = try server.api("GET", "/api/v2/logs/\(try #require(event["log_id"]?.string))", token: ops)
            #expect(one.status == 200 && one.json == event, "\(one.json.serialized)")
        }
        let last = try #require(try server.api("GET", "/api/v2/logs?take=1", token: ops).json.array?.first?["log_id"]?.string.flatMap { Int64($0) })
        for unknown in ["0", "-1", "+1", "1.0", " 1", "01x", "\(last + 1000)", "99999999999999999999", "9223372036854775807", "abc", "%E2%91%A0"] {
            let answer = try server.api("GET", "/api/v2/logs/\(unknown.replacingOccurrences(of: " ", with: "%20"))", token: ops)
            #expect(answer.status == 404 && answer.json["reason"] == .string("log_not_found"), "\(unknown): \(answer.json.serialized)")
        }
    }

    @Test("a client added to the database is used by a running server within seconds, and removed as fast")
    func databaseClients() throws {
        let server = try TestServer.withOperators(.socket)
        #expect(try server.post("/oauth/token", .object(["grant_type": .string("client_credentials"), "client_id": .string("late"), "client_secret": .string("s3cret-s3cret")])).json["reason"] == .string("client_secret_invalid"))
        try server.store.insertClient(ClientRow(id: "late", name: "Late", type: "confidential", secretHash: Digest.sha256.hash(Array("s3cret-s3cret".utf8)),
                                                grants: [GrantNames.clientCredentials], scopes: ["read:users"], redirectURIs: [], audiences: nil, createdAt: 0))
        #expect(eventually(timeout: 5) {
            try server.post("/oauth/token", .object(["grant_type": .string("client_credentials"), "client_id": .string("late"), "client_secret": .string("s3cret-s3cret")])).status == 200
        })
        let token = try server.managementToken("late", secret: "s3cret-s3cret")
        #expect(try server.api("GET", "/api/v2/users", token: token).status == 200)
        #expect(try server.store.deleteClient(id: "late", at: 0) == 0)
        #expect(eventually(timeout: 5) { try server.api("GET", "/api/v2/users", token: token).status == 401 })
    }

    @Test("a user's logs (Auth0's user log events): pages newest first or oldest first, with totals; bad paging refused")
    func userLogs() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        _ = try phone.signUp(email: "paged@signet.test")
        for _ in 0..<4 { _ = try phone.signIn() }
        _ = try SignedIn(server, email: "other@signet.test")
        let ops = try server.managementToken()
        let id = try #require(try server.api("GET", "/api/v2/users?q=email:%22paged@signet.test%22", token: ops).json.array?.first?["user_id"]?.string)
        let all = try #require(try server.api("GET", "/api/v2/users/\(id)/logs?per_page=100", token: ops).json.array)
        let ids = all.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
        #expect(ids.count >= 5 && ids == ids.sorted(by: >) && all.allSatisfy { $0["user_id"] == .string(id) }, "\(all)")
        // Pages of 2, newest first, then oldest first: every event once, in order.
        var newest: [Int64] = [], oldest: [Int64] = []
        for page in 0..<((ids.count + 1) / 2) {
            newest += try server.api("GET", "/api/v2/users/\(id)/logs?page=\(page)&per_page=2", token: ops).json.array?.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } } ?? []
            oldest += try server.api("GET", "/api/v2/users/\(id)/logs?page=\(page)&per_page=2&sort=date:1", token: ops).json.array?.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } } ?? []
        }
        #expect(newest == ids && oldest == ids.reversed())
        let totals = try server.api("GET", "/api/v2/users/\(id)/logs?page=1&per_page=2&include_totals=true", token: ops).json
        #expect(totals["start"] == .number("2") && totals["limit"] == .number("2") && totals["length"] == .number("2")
                && totals["total"] == .number(String(ids.count)) && totals["logs"]?.array?.count == 2, "\(totals.serialized)")
        #expect(try server.api("GET", "/api/v2/users/\(id)/logs?page=99&per_page=50", token: ops).json == .array([]))
        for bad in ["page=-1", "per_page=0", "per_page=101", "page=x", "sort=date", "sort=type:1", "page=100001"] {
            #expect(try server.api("GET", "/api/v2/users/\(id)/logs?" + bad, token: ops).json["reason"] == .string("malformed"), "\(bad)")
        }
    }
}
