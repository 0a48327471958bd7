public import Foundation
import SignetAPI
public import SignetCrypto
public import SignetHTTP
public import SignetStore
public import SignetWebAuthn

/// Signet's HTTP API (DESIGN.md, "HTTP API"): answers requests on the HTTP server's worker
/// threads. It holds no per-request state; everything single-use lives in the store.
public final class SignetService: HTTPHandler, @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    public let keys: KeyRing
    let rp: RelyingParty
    let metrics = Metrics()
    let clock: @Sendable () -> Date
    let random: RandomBytes
    private var router = Router<SignetService>()
    let sessions: SessionSealer
    /// What sign-ins verify against, so a sign-in reads nothing before its one transaction.
    let credentialCache = CredentialCache()
    let appleAssociation: [UInt8]
    let androidAssociation: [UInt8]
    let discovery: [UInt8]

    /// - Parameters:
    ///   - clock: the time, injected so tests can move it.
    public init(
        configuration: ServerConfiguration, store: any Store, keys: KeyRing, kek: [UInt8], trustAnchors: [Certificate] = [],
        clock: @escaping @Sendable () -> Date = { Date() }, random: @escaping RandomBytes = { SecureRandom.bytes($0) }
    ) {
        self.configuration = configuration
        self.store = store
        self.keys = keys
        self.clock = clock
        self.random = random
        sessions = SessionSealer(kek: kek)
        var rp = RelyingParty(id: configuration.rpID, name: configuration.rpName, origins: configuration.allowedOrigins)
        rp.allowedAlgorithms = configuration.algorithms
        rp.trustAnchors = trustAnchors
        self.rp = rp
        appleAssociation = WellKnown.appleAppSiteAssociation(configuration).serializedBytes
        androidAssociation = WellKnown.assetLinks(configuration).serializedBytes
        discovery = WellKnown.openIDConfiguration(configuration).serializedBytes
        router = SignetService.routes()
    }

    static func routes() -> Router<SignetService> {
        var r = Router<SignetService>()
        r.add("POST", "/passkey/register") { s, request, _ in try s.passkeyRegister(request) }
        r.add("POST", "/passkey/challenge") { s, request, _ in try s.passkeyChallenge(request) }
        r.add("POST", "/oauth/token") { s, request, _ in try s.token(request) }
        r.add("POST", "/oauth/revoke") { s, request, _ in try s.revoke(request) }
        r.add("GET", "/userinfo") { s, request, _ in try s.userInfo(request) }
        r.add("GET", "/.well-known/openid-configuration") { s, _, _ in .json(200, s.discovery) }
        r.add("GET", "/.well-known/jwks.json") { s, _, _ in
            var response = HTTPResponse.json(200, s.keys.jwks.serializedBytes)
            response.headers = [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=60")]
            return response
        }
        r.add("GET", "/.well-known/apple-app-site-association") { s, _, _ in HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: s.appleAssociation) }
        r.add("GET", "/.well-known/assetlinks.json") { s, _, _ in HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: s.androidAssociation) }
        r.add("GET", "/me/passkeys") { s, request, _ in try s.listPasskeys(request) }
        r.add("POST", "/me/passkeys/options") { s, request, _ in try s.addPasskeyOptions(request) }
        r.add("POST", "/me/passkeys") { s, request, _ in try s.addPasskey(request) }
        r.add("PATCH", "/me/passkeys/{id}") { s, request, p in try s.renamePasskey(request, id: p["id"] ?? "") }
        r.add("DELETE", "/me/passkeys/{id}") { s, request, p in try s.revokePasskey(request, id: p["id"] ?? "") }
        r.add("POST", "/me/device-keys") { s, request, _ in try s.enrollDeviceKey(request) }
        r.add("GET", "/me/device-keys") { s, request, _ in try s.listDeviceKeys(request) }
        r.add("DELETE", "/me/device-keys/{id}") { s, request, p in try s.revokeDeviceKey(request, id: p["id"] ?? "") }
        r.add("POST", "/actions/challenge") { s, request, _ in try s.actionChallenge(request) }
        r.add("POST", "/actions/approve") { s, request, _ in try s.approveAction(request) }
        r.add("POST", "/actions/verify") { s, request, _ in try s.verifyActionToken(request) }
        r.add("GET", "/healthz") { s, _, _ in s.health() }
        r.add("GET", "/metrics") { s, _, _ in HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: Array(s.metrics.text.utf8)) }
        return r
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        var response: HTTPResponse
        var route = "unmatched"
        switch router.match(request.method, request.path) {
        case .found(let matched, let parameters):
            route = matched.pattern
            do {
                response = try matched.handler(self, request, parameters)
            } catch let error as APIError {
                response = error.response
            } catch let error as StoreError {
                response = APIError.store(error).response
            } catch {
                response = APIError.internalError.response
            }
        case .methodNotAllowed(let pattern):
            route = pattern
            response = APIError(405, "invalid_request", "method_not_allowed", "\(request.method) is not allowed on \(pattern)").response
        case .notFound:
            response = APIError(404, "invalid_request", "not_found", "no such endpoint").response
        }
        response.route = route
        metrics.request(route: route, status: response.status, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        return response
    }

    var nowMillis: Int64 { Int64(clock().timeIntervalSince1970 * 1000) }

    /// 16 bytes: the time in milliseconds (6 bytes, big-endian), then 10 random bytes. Unique
    /// like a random ID, but IDs made later sort later, so the B-tree that keys on them (used
    /// auth sessions, refresh-token families) grows at its right edge, in pages already cached,
    /// instead of in a random page at every insert. For identifiers only, never for secrets.
    func timeOrderedID() -> [UInt8] {
        let ms = UInt64(max(0, nowMillis))
        return (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + random(10)
    }

    func health() -> HTTPResponse {
        do {
            try store.ping()
            return .json(200, Array(#"{"database":"ok","status":"ok"}"#.utf8))
        } catch {
            return .json(503, Array(#"{"database":"unavailable","reason":"database_unavailable","status":"unavailable"}"#.utf8))
        }
    }

    /// Records an audit event; a failure to write it is not allowed to change the answer.
    func audit(_ kind: String, _ outcome: String, reason: String? = nil, user: String? = nil, client: String? = nil, credential: [UInt8]? = nil, request: HTTPRequest) {
        try? store.appendAudit(AuditEvent(
            at: nowMillis, kind: kind, outcome: outcome, reason: reason, userID: user, clientID: client,
            credentialID: credential.map { Base64URL.encode($0) }, remote: request.remoteAddress, requestID: request.requestID))
    }

    /// The client, which must exist and be allowed `grant`.
    func client(_ id: String, grant: String? = nil) throws -> ClientConfiguration {
        guard let client = configuration.client(id) else { throw APIError(401, "invalid_client", "client_unknown", "unknown client_id") }
        if let grant, !client.grants.contains(grant) {
            throw APIError(400, "unauthorized_client", "grant_not_allowed", "this client may not use grant \(grant)")
        }
        return client
    }
}
