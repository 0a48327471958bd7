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

/// DESIGN.md, "Security rules": usernames are not probed through the API.
@Suite struct NoProbingTests {
    /// The options' members and their JSON types, and each allowed credential's.
    static func shape(_ options: JSONValue) -> String {
        func kind(_ v: JSONValue) -> String {
            switch v {
            case .object(let o): "{" + o.keys.sorted().map { "\($0):\(kind(o[$0]!))" }.joined(separator: ",") + "}"
            case .array(let a): "[" + a.map(kind).joined(separator: ",") + "]"
            case .string(let s): Base64URL.decode(s).map { "b64(\($0.count))" } ?? "string"
            default: "\(v)".prefix(4).description
            }
        }
        guard case .object(var o) = options else { return "" }
        o["challenge"] = .string("")
        return kind(.object(o))
    }

    @Test("an unknown username's challenge has a known one's shape, its passkey IDs are stable, and the grant fails like a wrong passkey")
    func unknownLooksKnown() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "known@signet.test")
        func challenge(_ username: String) throws -> JSONValue {
            let (status, json) = try server.post("/passkey/challenge", .object(["client_id": .string("app"), "username": .string(username)]))
            try #require(status == 200)
            return try #require(json["authn_params_public_key"])
        }
        let known = try challenge("known@signet.test")
        let unknown = try challenge("nobody@signet.test")
        #expect(Self.shape(known) == Self.shape(unknown), "\(Self.shape(known)) vs \(Self.shape(unknown))")
        #expect(unknown["allowCredentials"] == (try challenge("NOBODY@signet.test"))["allowCredentials"])
        #expect(unknown["allowCredentials"] != (try challenge("somebody@signet.test"))["allowCredentials"])
        // A user with no live passkey looks the same. (And a real passkey answering an unknown
        // username's challenge is refused as any wrong passkey is.)
        let (_, start) = try server.post("/passkey/challenge", .object(["client_id": .string("app"), "username": .string("nobody@signet.test")]))
        let challenge = try #require(start["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let real = try phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        let (status, json) = try phone.exchange(session: try #require(start["auth_session"]?.string), credential: real.json)
        #expect(status == 400 && json["reason"] == .string("credential_unknown"))
    }
}

/// DESIGN.md, "Security rules": rate limits, each bucket a setting, 429 with Retry-After.
@Suite struct RateLimitTests {
    @Test("sign-up starts are limited per address and per client IP, with Retry-After")
    func signUpStarts() throws {
        // In process: the test says which address each request comes from (X-Test-Remote).
        let server = try TestServer(.inProcess) {
            $0.rateLimits.signUpPerIdentifier = RateLimit(limit: 2, window: 600)
            $0.rateLimits.signUpPerIP = RateLimit(limit: 4, window: 600)
        }
        server.clock.startWindow(600)
        func start(_ email: String, from ip: String = "198.51.100.7") throws -> HTTPClient.Response {
            try server.send("POST", "/passkey/register", headers: [("X-Test-Remote", ip)], body: Array(#"{"client_id":"app","user_profile":{"email":"\#(email)"}}"#.utf8))
        }
        #expect(try start("a@signet.test").status == 200)
        #expect(try start("a@signet.test").status == 200)
        let third = try start("a@signet.test")
        #expect(third.status == 429 && third.text.contains("rate_limited"))
        let wait = try #require(third.headers["retry-after"].flatMap { Int($0) })
        #expect((1...600).contains(wait))
        // Another address from the same IP is fine until the IP's own budget (4) is spent; the
        // route counts every start from the IP, the refused third one too.
        #expect(try start("b@signet.test").status == 200)
        #expect(try start("c@signet.test").status == 429)
        // Another IP is not affected.
        #expect(try start("d@signet.test", from: "203.0.113.9").status == 200)
        // A new window starts over.
        server.clock.advance(600)
        #expect(try start("a@signet.test").status == 200)
    }

    @Test("failures per IP turn into 429; a successful sign-in from that IP is never throttled")
    func failures() throws {
        let server = try TestServer { $0.rateLimits.failuresPerIP = RateLimit(limit: 3, window: 300) }
        server.clock.startWindow(300)
        let phone = Phone(server)
        _ = try phone.signUp(email: "nat@signet.test")
        let bad = #"{"grant_type":"refresh_token","client_id":"app","refresh_token":"bm9wZQ"}"#
        var reasons: [String] = []
        for _ in 0..<5 {
            let answer = try server.send("POST", "/oauth/token", body: Array(bad.utf8))
            reasons.append((try StrictJSON().parse(answer.body))["reason"]?.string ?? "")
        }
        #expect(reasons == ["refresh_token_unknown", "refresh_token_unknown", "refresh_token_unknown", "rate_limited", "rate_limited"])
        // The same address signs in fine.
        for _ in 0..<3 { _ = try phone.signIn() }
    }

    @Test("audit rows of unauthenticated failures are limited per IP, and a signed-in caller's once its address is rate limited; with rate_limits.enabled false nothing is limited")
    func auditAndOff() throws {
        let server = try TestServer { $0.rateLimits.auditFailuresPerIP = RateLimit(limit: 5, window: 60); $0.rateLimits.failuresPerIP = RateLimit(limit: 1000, window: 60) }
        server.clock.startWindow(60)
        let bad = #"{"grant_type":"urn:okta:params:oauth:grant-type:webauthn","client_id":"app","auth_session":"x","authn_response":{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"AA"}}}"#
        for _ in 0..<20 { _ = try server.send("POST", "/oauth/token", body: Array(bad.utf8)) }
        #expect(try server.store.auditEvents(limit: 100).filter { $0.outcome == "failure" }.count == 5)

        // Signed in, an account's refusals name it, each audited, until the address is past its
        // failures: the rate-limited refusals are then limited as an unauthenticated caller's.
        let limited = try TestServer { $0.rateLimits.auditFailuresPerIP = RateLimit(limit: 5, window: 60); $0.rateLimits.failuresPerIP = RateLimit(limit: 3, window: 60) }
        limited.clock.startWindow(60)
        let account = try SignedIn(limited, email: "spam@signet.test")
        let garbage = JSONValue.object(["auth_session": .string("x"), "authn_response": .object([
            "id": .string("AA"), "rawId": .string("AA"), "type": .string("public-key"), "response": .object(["clientDataJSON": .string("AA"), "attestationObject": .string("AA")]),
        ])])
        let reasons = try (0..<20).map { _ in try account.call("POST", "/me/passkeys", garbage).json["reason"]?.string ?? "" }
        #expect(reasons.prefix(3).allSatisfy { $0 == "auth_session_unknown" } && reasons.dropFirst(3).allSatisfy { $0 == "rate_limited" }, "\(reasons)")
        let rows = try limited.store.auditEvents(limit: 100).filter { $0.kind == "add_passkey" }
        let userID = try #require(try limited.store.user(email: "spam@signet.test")?.id)
        #expect(rows.count == 8 && rows.allSatisfy { $0.userID == userID }, "\(rows.count) rows")
        #expect(rows.filter { $0.reason == "rate_limited" }.count == 5)

        let open = try TestServer { $0.rateLimits.enabled = false; $0.rateLimits.signUpPerIdentifier = RateLimit(limit: 1, window: 600) }
        for _ in 0..<5 {
            #expect(try open.send("POST", "/passkey/register", body: Array(#"{"client_id":"app","user_profile":{"email":"x@signet.test"}}"#.utf8)).status == 200)
        }
    }
}

/// Client addresses come from `Forwarded` / `X-Forwarded-For` only when the peer is a trusted proxy.
@Suite struct ClientAddressTests {
    @Test("X-Forwarded-For and Forwarded are honoured from a trusted proxy only, for audit and limits")
    func forwarded() throws {
        let server = try TestServer(.socket) { $0.trustedProxies = [CIDR("127.0.0.0/8")!, CIDR("10.0.0.0/8")!] }
        let untrusted = try TestServer(.socket)
        // A token grant with a bad auth session: its audit row names the client's address.
        func lastRemote(_ s: TestServer, _ headers: [(String, String)]) throws -> String? {
            _ = try s.client().send("POST", "/oauth/token", headers: headers, body: Array(
                #"{"grant_type":"urn:okta:params:oauth:grant-type:webauthn","client_id":"app","auth_session":"x","authn_response":{"id":"AA","rawId":"AA","response":{"clientDataJSON":"AA"}}}"#.utf8))
            return try s.store.auditEvents(limit: 1).first?.remote
        }
        #expect(try lastRemote(server, [("X-Forwarded-For", "198.51.100.1, 10.1.2.3")]) == "198.51.100.1")
        #expect(try lastRemote(server, [("Forwarded", #"for=192.0.2.60;proto=https, for="[2001:db8::17]:4711""#)]) == "2001:db8::17")
        #expect(try lastRemote(server, [("X-Forwarded-For", "not-an-ip")]) == "127.0.0.1")
        // What a client sent cannot swallow what its proxy appended: the audit row still names it.
        #expect(try lastRemote(server, [("X-Forwarded-For", "1.1.1.1\u{600}, 198.51.100.9")]) == "198.51.100.9")
        #expect(try lastRemote(untrusted, [("X-Forwarded-For", "198.51.100.1")]) == "127.0.0.1")
    }

    @Test("the proxy chain: Forwarded's for= (quoted, bracketed IPv6 with a port, IPv4 with a port, any case), X-Forwarded-For with its optional white space")
    func chain() {
        #expect(SignetService.forwardedChain(forwarded: #"for=192.0.2.60;proto=https, For="[2001:db8::17]:4711" , for=198.51.100.2:8443;by=x"#, xForwardedFor: nil)
            == ["192.0.2.60", "2001:db8::17", "198.51.100.2"])
        #expect(SignetService.forwardedChain(forwarded: #"proto=https;host=x, fore=1.2.3.4"#, xForwardedFor: "9.9.9.9").isEmpty)
        #expect(SignetService.forwardedChain(forwarded: nil, xForwardedFor: " 198.51.100.1 ,\t10.1.2.3\t") == ["198.51.100.1", "10.1.2.3"])
        #expect(SignetService.forwardedChain(forwarded: String(repeating: "for=1.1.1.1,", count: 100), xForwardedFor: nil).count == 32)
        // A mark that joins the next character into one (U+0600 before the comma) does not glue
        // the proxy's entry to the client's (found by the fuzzer in the same kind of split).
        #expect(SignetService.forwardedChain(forwarded: nil, xForwardedFor: "1.1.1.1\u{600}, 198.51.100.1") == ["1.1.1.1\u{600}", "198.51.100.1"])
        #expect(SignetService.forwardedChain(forwarded: "for=1.1.1.1\u{600}, for=198.51.100.1", xForwardedFor: nil) == ["1.1.1.1\u{600}", "198.51.100.1"])
        #expect(SignetService.forwardedChain(forwarded: "for\u{600}=1.1.1.1;x=\u{600};for=198.51.100.1", xForwardedFor: nil) == ["198.51.100.1"])
    }

    @Test("CIDR matching", arguments: [
        ("10.0.0.0/8", "10.255.1.2", true), ("10.0.0.0/8", "11.0.0.1", false), ("192.168.1.0/24", "192.168.1.77", true),
        ("192.168.1.0/25", "192.168.1.200", false), ("2001:db8::/32", "2001:db8:1::5", true), ("2001:db8::/32", "2001:db9::1", false),
        ("::1", "::1", true), ("127.0.0.1", "::ffff:127.0.0.1", true), ("0.0.0.0/0", "203.0.113.4", true), ("10.0.0.0/8", "::1", false),
    ])
    func cidr(_ network: String, _ address: String, _ inside: Bool) throws {
        #expect(try #require(CIDR(network)).contains(address) == inside)
        // The longest well-formed network still parses under the length bound.
        #expect(CIDR("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128") != nil)
    }

    @Test("what per-address limits count an address under: IPv4 as itself, IPv6 by its /64 (or the configured prefix), whatever its spelling", arguments: [
        ("203.0.113.7", 64, "203.0.113.7"), ("::ffff:203.0.113.7", 64, "203.0.113.7"),
        ("2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2:0:0:0:0/64"), ("2001:DB8:1:2::9", 64, "2001:db8:1:2:0:0:0:0/64"),
        ("2001:db8:1:2ff::1", 56, "2001:db8:1:200:0:0:0:0/56"), ("2001:db8:1:2ff::1", 60, "2001:db8:1:2f0:0:0:0:0/60"),
        ("::1", 128, "0:0:0:0:0:0:0:1/128"), ("local", 64, "local"), ("", 64, ""),
    ])
    func limitKey(_ address: String, _ prefix: Int, _ key: String) {
        #expect(CIDR.limitKey(address, ipv6Prefix: prefix) == key)
    }

    @Test("addresses of one IPv6 /64 share their per-address limits; another /64 has its own")
    func ipv6Network() throws {
        let server = try TestServer(.socket) {
            $0.trustedProxies = [CIDR("127.0.0.0/8")!]
            $0.rateLimits.signUpPerIP = RateLimit(limit: 2, window: 3600)
            $0.rateLimits.signUpPerIdentifier = RateLimit(limit: 100, window: 3600)
        }
        func start(_ address: String, _ n: Int) throws -> Int {
            try server.client().send("POST", "/passkey/register", headers: [("X-Forwarded-For", address), ("Content-Type", "application/json")],
                                     body: Array(#"{"client_id":"app","user_profile":{"email":"v6-\#(n)@signet.test"}}"#.utf8)).status
        }
        #expect(try start("2001:db8:0:1::1", 1) == 200)
        #expect(try start("2001:db8:0:1:ffff:ffff:ffff:ffff", 2) == 200)
        #expect(try start("2001:db8:0:1::3", 3) == 429, "a third address of the same /64")
        #expect(try start("2001:db8:0:2::1", 4) == 200, "another /64")
        #expect(try start("198.51.100.1", 5) == 200)
    }

    @Test("the connection cap counts clients by the key it is given: addresses with one key share a cap")
    func connectionKey() throws {
        let server = try HTTPConnectionTests.server {
            $0.perIPConnectionLimit = 1
            // By /24, as Signet counts IPv6 clients by their /64.
            $0.addressKey = { $0.split(separator: ".").prefix(3).joined(separator: ".") }
        }
        defer { server.stop() }
        let first = HTTPClient(port: server.port, timeout: 2, source: "127.0.0.2")
        #expect(try first.send("GET", "/").status == 200)
        #expect(throws: (any Error).self) { try HTTPClient(port: server.port, timeout: 2, source: "127.0.0.3").send("GET", "/") }
        #expect(try HTTPClient(port: server.port, timeout: 2, source: "127.0.1.2").send("GET", "/").status == 200)
        first.close()
        #expect(eventually { try HTTPClient(port: server.port, timeout: 2, source: "127.0.0.3").send("GET", "/").status == 200 })
    }

    @Test("bad CIDRs are refused", arguments: ["10.0.0.0/33", "300.1.1.1", "1.2.3", "::1::2", "fe80::/129", "abc", "",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128" + String(repeating: " ", count: 30)])
    func badCIDR(_ text: String) {
        #expect(CIDR(text) == nil)
    }
}

/// DESIGN.md, "Security rules": an unknown `kid` never costs more than one key reload per interval.
@Suite struct UnknownKidTests {
    @Test("a flood of tokens with made-up kids reloads the keys once per interval")
    func reloadBound() throws {
        let server = try TestServer()
        let keys = server.app.service.keys
        let start = keys.missReloads
        for i in 0..<50 {
            let header = Base64URL.encode(Array(#"{"alg":"ES256","typ":"at+jwt","kid":"made-up-\#(i)"}"#.utf8))
            let token = header + "." + Base64URL.encode(Array(#"{"sub":"x"}"#.utf8)) + "." + Base64URL.encode(Array(repeating: 1, count: 64))
            #expect(try server.get("/me/passkeys", headers: [("Authorization", "Bearer \(token)")]).status == 401)
        }
        #expect(keys.missReloads - start == 1)
        // After the interval, one more.
        server.clock.advance(6)
        let header = Base64URL.encode(Array(#"{"alg":"ES256","typ":"at+jwt","kid":"made-up-again"}"#.utf8))
        _ = try server.get("/me/passkeys", headers: [("Authorization", "Bearer \(header).e30.\(Base64URL.encode(Array(repeating: 1, count: 64)))")])
        #expect(keys.missReloads - start == 2)
    }
}

/// DESIGN.md, "Reliability rules": when the storage is full, requests get 503 `storage_full`,
/// nothing is half written, and the server recovers by itself when space returns.
@Suite struct StorageFullTests {
    @Test("a full database answers 503 storage_full, writes nothing half, and serves again once there is room")
    func storageFull() throws {
        let server = try TestServer()
        let sql = try #require(server.store as? SQLStore)
        let phone = Phone(server)
        _ = try phone.signUp(email: "first@signet.test")
        // No room for one more page: the pages' free space fills, then writes fail as on a full disk.
        try sql.limitPages(try sql.pageCount())
        var answered = 1
        var full = 0
        for i in 0..<400 where full < 3 {
            let phone = Phone(server)
            let (session, credential) = try phone.startSignUp(email: "full\(i)@signet.test")
            let (status, json) = try phone.exchange(session: session, credential: credential)
            if status == 200 { answered += 1 } else {
                #expect(status == 503 && json["reason"] == .string("storage_full"), "\(json.serialized)")
                full += 1
            }
        }
        #expect(full == 3, "the database never filled")
        // Every answered sign-up is whole, and nothing of a refused one is left.
        #expect(server.counts["users"] == answered && server.counts["credentials"] == answered)
        #expect(try sql.integrityCheck() == "ok")
        // Space returns: the next sign-up and sign-in go through, without a restart.
        try sql.limitPages(0)
        _ = try Phone(server).signUp(email: "later@signet.test")
        _ = try phone.signIn()
        #expect(server.counts["users"] == answered + 1)
        #expect(try sql.integrityCheck() == "ok")
    }
}
