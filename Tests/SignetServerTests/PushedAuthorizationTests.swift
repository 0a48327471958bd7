import Foundation
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// Pushed authorization requests (RFC 9126): `POST /oauth/par`, then `/authorize` with
/// `client_id` and `request_uri` alone, through the service's router.
@Suite struct PushedAuthorizationTests {
    static let jwtKey = try! SoftwareClientKey(kid: "par-1")

    static func server() throws -> TestServer {
        try TestServer { c in
            TestServer.webClients(&c)
            // A confidential client that must push, authenticating with its key.
            var bank = ClientConfiguration(id: "bank-web", grants: [GrantNames.authorizationCode, GrantNames.refreshToken])
            bank.redirectURIs = ["https://bank.signet.test/cb"]
            bank.jwks = [jwtKey.jwk]
            bank.requirePushedRequests = true
            c.clients.append(bank)
        }
    }

    static func fields(client: String = "spa", redirect: String = "https://app.signet.test/callback", pkce: PKCE = PKCE()) -> [(String, String)] {
        [("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", "openid email offline_access"), ("state", "st-p"),
         ("nonce", "n-p"), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256")]
    }

    static func push(_ server: TestServer, _ fields: [(String, String)], headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        let body = fields.map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&")
        let response = try server.send("POST", "/oauth/par", headers: headers + [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
    }

    static func authorize(_ browser: WebBrowser, client: String, requestURI: String, extra: String = "") throws -> HTTPClient.Response {
        try browser.send("GET", "/authorize?client_id=\(Ceremonies.formEncoded(client))&request_uri=\(Ceremonies.formEncoded(requestURI))" + extra,
                         headers: [("Accept", "text/html")])
    }

    @Test("a public client pushes, the browser brings only client_id and request_uri, and the signed-in browser gets a code that exchanges")
    func publicClient() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "par@signet.test")
        let pkce = PKCE()
        let (status, pushed) = try Self.push(server, Self.fields(pkce: pkce))
        #expect(status == 201 && pushed["expires_in"] == .number("60"), "\(pushed.serialized)")
        let uri = try #require(pushed["request_uri"]?.string)
        #expect(uri.hasPrefix("urn:ietf:params:oauth:request_uri:"))
        // The query's other parameters are not the request's: the pushed redirect URI and state win.
        let answer = try Self.authorize(browser, client: "spa", requestURI: uri, extra: "&redirect_uri=https%3A%2F%2Fevil.example%2Fcb&state=other")
        let location = try #require(answer.headers["location"])
        #expect(answer.status == 303 && location.hasPrefix("https://app.signet.test/callback?"), "\(location)")
        let query = WebBrowser.query(location)
        #expect(query["state"] == "st-p")
        let code = try #require(query["code"])
        let (exchanged, tokens) = try server.exchange(code: code, verifier: pkce.verifier)
        #expect(exchanged == 200 && jwtClaims(tokens["id_token"]?.string)["nonce"] == .string("n-p"), "\(tokens.serialized)")
        // Without a session the request goes on to the sign-in page, sealed as any other.
        let stranger = try Self.authorize(WebBrowser(server), client: "spa", requestURI: try #require(try Self.push(server, Self.fields()).json["request_uri"]?.string))
        #expect(stranger.status == 303 && stranger.headers["location"]?.hasPrefix("/login?authorization=") == true, "\(stranger.headers)")
    }

    @Test("a client that must push: /authorize without request_uri is refused to its redirect URI; by private_key_jwt it pushes and gets its code")
    func requiredAndAsserted() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "bank@signet.test")
        let refused = try server.authorize(browser, client: "bank-web", redirect: "https://bank.signet.test/cb")
        let query = WebBrowser.query(refused.headers["location"])
        #expect(query["error"] == "invalid_request" && query["reason"] == "malformed", "\(query)")
        #expect(query["error_description"]?.contains("must push") == true)

        let fields = Self.fields(client: "bank-web", redirect: "https://bank.signet.test/cb")
        #expect(try Self.push(server, fields).json["reason"] == .string("client_secret_invalid"))
        let assertion = try Self.jwtKey.assertion(clientID: "bank-web", audience: "https://signet.test/oauth/par")
        let (status, pushed) = try Self.push(server, fields + [("client_assertion_type", ClientAssertion.jwtBearer), ("client_assertion", assertion)])
        #expect(status == 201, "\(pushed.serialized)")
        let answer = try Self.authorize(browser, client: "bank-web", requestURI: try #require(pushed["request_uri"]?.string))
        #expect(WebBrowser.query(answer.headers["location"])["code"] != nil, "\(answer.headers)")
    }

    @Test("a confidential client pushes with its secret: refused without it, with a wrong one, or with client_id of another client")
    func confidentialSecret() throws {
        let server = try Self.server()
        let fields = Self.fields(client: "backend", redirect: "https://rp.signet.test/cb")
        let basic = ("Authorization", "Basic " + Data("backend:\(TestServer.webSecret)".utf8).base64EncodedString())
        #expect(try Self.push(server, fields).status == 401)
        #expect(try Self.push(server, fields + [("client_secret", "guess")]).json["reason"] == .string("client_secret_invalid"))
        #expect(try Self.push(server, fields, headers: [basic]).status == 201)
        #expect(try Self.push(server, fields + [("client_secret", TestServer.webSecret)]).status == 201)
        // Basic names the client; a client_id of another one in the body is refused.
        #expect(try Self.push(server, Self.fields(), headers: [basic]).json["reason"] == .string("malformed"))
    }

    @Test("every refusal at the endpoint: request_uri inside, a parameter twice, JSON, an unknown redirect URI, no PKCE, response_type token")
    func pushRefusals() throws {
        let server = try Self.server()
        let base = Self.fields()
        let cases: [(String, [(String, String)], Int, String)] = [
            ("request_uri inside", base + [("request_uri", "urn:ietf:params:oauth:request_uri:x")], 400, "malformed"),
            ("state twice", base + [("state", "again")], 400, "malformed"),
            ("another redirect URI", Self.fields(redirect: "https://evil.example/cb"), 400, "redirect_uri_invalid"),
            ("no PKCE for a public client", base.filter { !$0.0.hasPrefix("code_challenge") }, 400, "pkce_invalid"),
            ("response_type token", base.map { $0.0 == "response_type" ? ($0.0, "token") : $0 }, 400, "unsupported_response_type"),
            ("an unknown client", Self.fields(client: "nobody"), 401, "client_unknown"),
            ("no scope openid", base.map { $0.0 == "scope" ? ($0.0, "email") : $0 }, 400, "malformed"),
        ]
        for (name, fields, status, reason) in cases {
            let (got, json) = try Self.push(server, fields)
            #expect(got == status && json["reason"] == .string(reason), "\(name): \(got) \(json.serialized)")
        }
        let json = try server.send("POST", "/oauth/par", body: Array(#"{"client_id":"spa"}"#.utf8))
        #expect(json.status == 415)
        let long = try Self.push(server, base + [("login_hint", String(repeating: "a", count: 8200))])
        #expect(long.status == 400 && long.json["reason"] == .string("malformed"))
        // Operators see pushes and their refusals by reason.
        #expect(try Self.push(server, base).status == 201)
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"signet_ceremonies_total{ceremony="pushed_authorization",outcome="success",reason=""} 1"#), "\(metrics.split(separator: "\n").filter { $0.contains("pushed") })")
        #expect(metrics.contains(#"signet_ceremonies_total{ceremony="pushed_authorization",outcome="failure",reason="redirect_uri_invalid"} 1"#))
    }

    @Test("a request_uri that is unknown, altered, expired, another client's, or without client_id gets the error page, never a redirect")
    func requestURIRefusals() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        let uri = try #require(try Self.push(server, Self.fields()).json["request_uri"]?.string)
        var altered = Array(uri.utf8)
        altered[altered.count - 5] = altered[altered.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for (client, requestURI, reason) in [("spa", "urn:ietf:params:oauth:request_uri:6esc", "request_uri_invalid"),
                                             ("spa", String(decoding: altered, as: UTF8.self), "request_uri_invalid"),
                                             ("backend", uri, "request_uri_invalid"),
                                             ("spa", "https://elsewhere.example/request.jwt", "request_uri_invalid")] {
            let answer = try Self.authorize(browser, client: client, requestURI: requestURI)
            #expect(answer.headers["location"] == nil && answer.status == 400, "\(client) \(requestURI.prefix(60))")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("data-reason=\"\(reason)\""), "\(client) \(requestURI.prefix(60))")
        }
        let anonymous = try browser.send("GET", "/authorize?request_uri=" + Ceremonies.formEncoded(uri), headers: [("Accept", "text/html")])
        #expect(anonymous.headers["location"] == nil && String(decoding: anonymous.body, as: UTF8.self).contains("data-reason=\"malformed\""))
        // Within its minute the same request_uri opens again (a reload, RFC 9126 §4); after it, never.
        #expect(try Self.authorize(browser, client: "spa", requestURI: uri).headers["location"] != nil)
        server.clock.advance(61)
        let expired = try Self.authorize(browser, client: "spa", requestURI: uri)
        #expect(expired.headers["location"] == nil && String(decoding: expired.body, as: UTF8.self).contains("data-reason=\"request_uri_invalid\""))
    }

    @Test("a DPoP proof on the push binds the code to its key (RFC 9449 §10.1): exchanged only with that key's proof; a replayed, misaddressed or mismatched proof is refused")
    func dpopAtPush() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "dpop-par@signet.test")
        let key = try SoftwareDPoPKey()
        let proof = try key.proof(method: "POST", url: "https://signet.test/oauth/par")
        let pkce = PKCE()
        let (status, pushed) = try Self.push(server, Self.fields(pkce: pkce), headers: [("DPoP", proof)])
        #expect(status == 201, "\(pushed.serialized)")
        #expect(try Self.push(server, Self.fields(), headers: [("DPoP", proof)]).json["reason"] == .string("dpop_replayed"))
        let misaddressed = try key.proof(method: "POST", url: "https://signet.test/oauth/token")
        #expect(try Self.push(server, Self.fields(), headers: [("DPoP", misaddressed)]).json["reason"] == .string("dpop_invalid"))
        let other = try SoftwareDPoPKey()
        let mismatched = try Self.push(server, Self.fields() + [("dpop_jkt", other.thumbprint)], headers: [("DPoP", try key.proof(method: "POST", url: "https://signet.test/oauth/par"))])
        #expect(mismatched.json["reason"] == .string("dpop_key_mismatch"), "\(mismatched.json.serialized)")

        let answer = try Self.authorize(browser, client: "spa", requestURI: try #require(pushed["request_uri"]?.string))
        let code = try #require(WebBrowser.query(answer.headers["location"])["code"])
        // Without a proof the code is used up; a second one shows the binding held.
        #expect(try server.exchange(code: code, verifier: pkce.verifier).json["reason"] == .string("dpop_invalid"))
        let second = try #require(try Self.push(server, Self.fields(pkce: pkce), headers: [("DPoP", try key.proof(method: "POST", url: "https://signet.test/oauth/par"))]).json["request_uri"]?.string)
        let again = try #require(WebBrowser.query(try Self.authorize(browser, client: "spa", requestURI: second).headers["location"])["code"])
        let (exchanged, tokens) = try server.exchange(code: again, verifier: pkce.verifier,
                                                      headers: [("DPoP", try key.proof(method: "POST", url: "https://signet.test/oauth/token"))])
        #expect(exchanged == 200 && tokens["token_type"] == .string("DPoP"), "\(tokens.serialized)")
        #expect(jwtClaims(tokens["access_token"]?.string)["cnf"]?["jkt"] == .string(key.thumbprint))
    }

    @Test("a deployment that requires pushing (web.require_pushed_authorization_requests): discovery says so, every client must push, and pushed requests work")
    func requiredEverywhere() throws {
        let json = #"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "web": {"require_pushed_authorization_requests": true}, "clients": [{"client_id": "x"}]}"#
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write(json), environment: [:]).requirePushedRequests)
        let server = try TestServer { c in
            TestServer.webClients(&c)
            c.requirePushedRequests = true
        }
        let document = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(document["require_pushed_authorization_requests"] == .bool(true))
        let browser = WebBrowser(server)
        try browser.signUp(email: "everywhere@signet.test")
        #expect(WebBrowser.query(try server.authorize(browser).headers["location"])["error"] == "invalid_request")
        let uri = try #require(try Self.push(server, Self.fields()).json["request_uri"]?.string)
        #expect(WebBrowser.query(try Self.authorize(browser, client: "spa", requestURI: uri).headers["location"])["code"] != nil)
    }

    @Test("discovery names the endpoint, and a client stored with --require-par must push")
    func discoveryAndStoredClient() throws {
        let server = try Self.server()
        let document = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(document["pushed_authorization_request_endpoint"] == .string("https://signet.test/oauth/par"))
        #expect(document["require_pushed_authorization_requests"] == .bool(false))
        let context = RequestContext(remoteAddress: "127.0.0.1", requestID: "t")
        let added = try server.app.service.ceremonies.addClient(
            name: "Pushed", type: "public", grants: [GrantNames.authorizationCode], scopes: [], redirectURIs: ["https://pushed.signet.test/cb"], audiences: nil,
            requirePushedRequests: true, by: .commandLine, context: context)
        #expect(try server.store.clientRows().first { $0.id == added.client.id }?.requirePushedRequests == true)
        let browser = WebBrowser(server)
        let refused = try server.authorize(browser, client: added.client.id, redirect: "https://pushed.signet.test/cb")
        #expect(WebBrowser.query(refused.headers["location"])["error"] == "invalid_request")
        #expect(try Self.push(server, Self.fields(client: added.client.id, redirect: "https://pushed.signet.test/cb")).status == 201)
        #expect(throws: AuthError.self) {
            try server.app.service.ceremonies.addClient(name: "No code flow", type: "confidential", grants: [GrantNames.clientCredentials], scopes: [], redirectURIs: [],
                                                        audiences: nil, requirePushedRequests: true, by: .commandLine, context: context)
        }
    }
}
