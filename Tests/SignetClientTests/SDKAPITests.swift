import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignetAPI
import SignetClient
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Synchronization
import SignetTestSupport
import Testing

/// An app's own API as a resource server would answer it (RFC 6750, RFC 9449, RFC 9470): it reads
/// the access token's claims (a real one would verify them, or introspect) and refuses by route.
final class StubAPI: HTTPHandler {
    /// Every `sid` a `/fresh` call was refused for; a token of another session passes.
    let refusedSessions = Mutex<Set<String>>([])
    /// The calls seen: route, the token's `acr`, whether a DPoP proof came, the proof's nonce.
    let calls = Mutex<[(route: String, acr: String?, proof: Bool, nonce: String?)]>([])

    static func claims(_ jwt: String?) -> JSONValue {
        guard let part = jwt?.split(separator: ".").dropFirst().first, let bytes = Base64URL.decode(String(part)) else { return .null }
        return (try? StrictJSON().parse(bytes)) ?? .null
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let authorization = request.header("authorization") ?? ""
        let token = authorization.split(separator: " ").last.map(String.init)
        let claims = Self.claims(token)
        let proof = request.header("dpop")
        let nonce = Self.claims(proof)["nonce"]?.string
        calls.withLock { $0.append((request.path, claims["acr"]?.string, proof != nil, nonce)) }
        let scheme = authorization.hasPrefix("DPoP ") ? "DPoP" : "Bearer"
        func refuse(_ challenge: String, _ headers: [(String, String)] = []) -> HTTPResponse {
            HTTPResponse(status: 401, headers: [("WWW-Authenticate", "\(scheme) \(challenge)")] + headers, body: Array("{}".utf8))
        }
        guard token != nil, claims["sub"]?.string != nil else { return refuse(#"error="invalid_token""#) }
        switch request.path {
        case "/fresh":
            // The first session is refused as too old; a step-up's new session passes.
            let sid = claims["sid"]?.string ?? ""
            let refused = refusedSessions.withLock { seen in
                if seen.isEmpty { seen.insert(sid); return true }
                return seen.contains(sid)
            }
            if refused { return refuse(#"error="insufficient_user_authentication", error_description="too old", acr_values="phr", max_age="0""#) }
        case "/hardware":
            if claims["acr"]?.string != "phrh" { return refuse(#"error="insufficient_user_authentication", acr_values="phrh""#) }
        case "/nonce":
            if nonce != "api-nonce-1" { return refuse(#"error="use_dpop_nonce", error_description="send the nonce""#, [("DPoP-Nonce", "api-nonce-1")]) }
        default:
            break
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"ok":true}"#.utf8))
    }
}

@Suite struct SDKAPITests {
    static func api() throws -> (server: HTTPServer, handler: StubAPI, base: String) {
        let handler = StubAPI()
        let (server, base) = try startLoopbackServer(handler)
        return (server, handler, base)
    }

    @Test("callAPI: a bearer token for the API's audience; insufficient_user_authentication steps up once with the passkey and retries; a second refusal is the app's to read")
    func stepUpOnChallenge() async throws {
        let signet = try ServerProcess()
        let (api, stub, base) = try Self.api()
        defer { api.stop() }
        let app = try App(signet)
        try await app.client.signUp(email: "api@signet.test")
        let audience = "http://localhost:\(signet.port)/api"
        let before = try #require(try app.tokens.load()?.refreshToken)

        let (body, answer) = try await app.client.callAPI(URLRequest(url: URL(string: base + "/fresh")!), audience: audience)
        #expect(answer.statusCode == 200 && String(decoding: body, as: UTF8.self) == #"{"ok":true}"#)
        let fresh = stub.calls.withLock { $0 }
        #expect(fresh.count == 2 && fresh.allSatisfy { $0.acr == "phr" && !$0.proof }, "\(fresh)")
        #expect(try app.tokens.load()?.refreshToken != before, "the step-up started a new session")

        // An API that wants more than this passkey gives: one step-up, then its refusal comes back.
        let (_, refused) = try await app.client.callAPI(URLRequest(url: URL(string: base + "/hardware")!), audience: audience)
        #expect(refused.statusCode == 401)
        let challenge = try #require(AuthenticationChallenge.parse(refused.value(forHTTPHeaderField: "WWW-Authenticate") ?? "").first)
        #expect(challenge.scheme == "bearer" && challenge.error == "insufficient_user_authentication" && challenge.acrValues == ["phrh"])
        #expect(stub.calls.withLock { $0.filter { $0.route == "/hardware" }.count } == 2)
        // An audience that is not the client's is refused before any call.
        await #expect(throws: SignetError.self) { try await app.client.callAPI(URLRequest(url: URL(string: base + "/open")!), audience: "https://evil.example") }
    }

    @Test("callAPI with a DPoP key: Authorization DPoP and a proof of the call; the API's use_dpop_nonce is answered once with its nonce")
    func dpopAndNonce() async throws {
        let signet = try ServerProcess()
        let (api, stub, base) = try Self.api()
        defer { api.stop() }
        let (client, _) = try SDKDPoPTests.app(signet, dpop: try SoftwareDPoPKey())
        try await client.signUp(email: "api-dpop@signet.test")
        let (_, answer) = try await client.callAPI(URLRequest(url: URL(string: base + "/nonce")!), audience: "http://localhost:\(signet.port)/api")
        #expect(answer.statusCode == 200)
        let calls = stub.calls.withLock { $0 }
        #expect(calls.count == 2 && calls.allSatisfy(\.proof) && calls.map(\.nonce) == [nil, "api-nonce-1"], "\(calls)")
    }

    @Test("WWW-Authenticate: several challenges, quoted values with escapes, token68, case, repeats, and broken headers bounded")
    func challenges() {
        let parsed = AuthenticationChallenge.parse(#"Basic realm="a, b", DPoP algs="ES256 EdDSA", error="use_dpop_nonce", Bearer ERROR=invalid_token, error="second", max_age=300, acr_values="phr phrh""#)
        #expect(parsed.map(\.scheme) == ["basic", "dpop", "bearer"])
        #expect(parsed[0].parameters == ["realm": "a, b"] && parsed[1].parameters["algs"] == "ES256 EdDSA" && parsed[1].error == "use_dpop_nonce")
        #expect(parsed[2].error == "invalid_token" && parsed[2].maxAge == 300 && parsed[2].acrValues == ["phr", "phrh"])
        #expect(AuthenticationChallenge.parse(#"Bearer error="a\"b\\c""#).first?.error == #"a"b\c"#)
        #expect(AuthenticationChallenge.parse("Negotiate abc/def+==, Bearer").map(\.scheme) == ["negotiate", "bearer"])
        #expect(AuthenticationChallenge.parse("").isEmpty && AuthenticationChallenge.parse(" , ,").isEmpty)
        #expect(AuthenticationChallenge.parse(#"Bearer error="unterminated"#).first?.parameters.isEmpty == true)
        #expect(AuthenticationChallenge.parse("Bearer max_age=-5").first?.maxAge == nil)
        #expect(AuthenticationChallenge.parse(String(repeating: "A, ", count: 5000)).count == 16)
        #expect(AuthenticationChallenge.parse("Bearer " + (0..<100).map { "p\($0)=v" }.joined(separator: ", ")).first?.parameters.count == 32)
    }
}
