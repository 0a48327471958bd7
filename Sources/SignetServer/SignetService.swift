public import Foundation
import SignetAPI
public import SignetAuth
public import SignetCrypto
public import SignetHTTP
public import SignetWebAuthn
import SignetStore

/// Signet's JSON API (DESIGN.md, "HTTP API"): an adapter over ``Ceremonies``. Each route maps
/// the request onto SignetAPI's wire types, declares what it needs (``Needs``), calls one
/// ceremony and encodes its typed result; failures become HTTP in ``ErrorAnswer`` only. It holds
/// no per-request state; everything single-use lives in the store.
public final class SignetService: HTTPHandler, Sendable {
    public let ceremonies: Ceremonies
    public var configuration: ServerConfiguration { ceremonies.configuration }
    public var store: any Store { ceremonies.store }
    public var keys: KeyRing { ceremonies.keys }
    let router: Router<SignetService>
    let appleAssociation: [UInt8]
    let androidAssociation: [UInt8]
    let passkeyEndpoints: [UInt8]
    let brand: BrandAssets
    let discovery: [UInt8]
    /// Origins whose scripts may call the JSON API (every client's `allowed_origins`).
    let corsOrigins: Set<String>
    /// The store when it is durable SQLite, whose writes' answers wait for their sync (``handleHeld(_:)``).
    let heldStore: SQLStore?

    /// - Parameters:
    ///   - clock: the time, injected so tests can move it.
    public init(
        configuration: ServerConfiguration, store: any Store, keys: KeyRing, kek: [UInt8], kept: KeyEncryptionKey.KeptKeys = .init(), trustAnchors: [Certificate] = [],
        metadata: MetadataBLOB? = nil, clock: @escaping @Sendable () -> Date = { Date() }, random: @escaping RandomBytes = { SecureRandom.bytes($0) }
    ) {
        ceremonies = Ceremonies(configuration: configuration, store: store, keys: keys, kek: kek, kept: kept, trustAnchors: trustAnchors,
                                metadata: metadata, clock: clock, random: random, clientKeys: ClientKeyCache(clock: clock))
        appleAssociation = WellKnown.appleAppSiteAssociation(configuration).serializedBytes
        androidAssociation = WellKnown.assetLinks(configuration).serializedBytes
        passkeyEndpoints = WellKnown.passkeyEndpoints(configuration).serializedBytes
        brand = BrandAssets(configuration.branding)
        discovery = WellKnown.openIDConfiguration(configuration).serializedBytes
        router = SignetService.routes()
        corsOrigins = Set(configuration.clients.flatMap(\.allowedOrigins))
        heldStore = (store as? SQLStore).flatMap { $0.defersDurability ? $0 : nil }
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        let response = routed(request)
        record(response, since: start)
        return response
    }

    /// Counts an answer in the request metrics, with the time since `start`: for a held answer,
    /// until it is released, so the latency includes the wait for the disk.
    private func record(_ response: HTTPResponse, since start: UInt64) {
        ceremonies.metrics.request(route: response.route ?? "unmatched", status: response.status, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    /// The answer of the route `request` matches, with its route named and CORS applied.
    private func routed(_ request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        var route = "unmatched"
        if request.method == "OPTIONS", let origin = request.header("origin") {
            response = preflight(request, origin: origin)
            route = "preflight"
        } else {
            switch router.match(request.method, request.path) {
            case .found(let matched, let parameters):
                route = matched.pattern
                do {
                    response = try matched.handler(self, try admit(request, needs: matched.needs, parameters: parameters))
                } catch {
                    response = answer(error, for: request)
                }
            case .methodNotAllowed(let pattern, let allowed) where request.method == "OPTIONS":
                // RFC 9110 §9.3.7: what the resource takes, in Allow.
                route = pattern
                response = HTTPResponse(status: 204, headers: [("Allow", (allowed + ["OPTIONS"]).joined(separator: ", "))])
            case .methodNotAllowed(let pattern, let allowed):
                route = pattern
                response = answer(AuthError(.methodNotAllowed, "\(request.method) on \(pattern)"), for: request)
                response.headers.append(("Allow", allowed.joined(separator: ", ")))
            case .notFound where request.method == "OPTIONS" && request.path == "*":
                // The server in general (§9.3.7): every method some route takes.
                response = HTTPResponse(status: 204, headers: [("Allow", (router.methods + ["OPTIONS"]).joined(separator: ", "))])
            case .notFound:
                response = answer(AuthError(.notFound, "no route"), for: request)
            }
            allowCORS(&response, request)
        }
        response.route = route
        return response
    }

    /// CORS on an answer of the JSON API to a configured origin's script.
    private func allowCORS(_ response: inout HTTPResponse, _ request: HTTPRequest) {
        guard let origin = request.header("origin"), corsOrigins.containsExactly(origin), Self.isAPIPath(request.path) else { return }
        response.headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"), ("Access-Control-Expose-Headers", "WWW-Authenticate, DPoP-Nonce")]
    }

    /// A refusal as the templated error page for a browser's navigation, else as JSON.
    func answer(_ error: any Error, for request: HTTPRequest) -> HTTPResponse {
        if request.path.hasPrefix(Self.scimBase + "/") { return Self.scimError(error, for: request) }
        return request.wantsHTML ? errorPage(error, request: request) : ErrorAnswer.response(error, for: request)
    }

    /// The JSON API, which CORS opens to the clients' `allowed_origins`; the pages never.
    static func isAPIPath(_ path: String) -> Bool {
        !["/login", "/signup", "/enroll", "/account", "/device", "/authorize", "/logout", "/assets"].contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// A CORS preflight (Fetch §3.2.2): allowed for a configured origin on the JSON API, with the
    /// methods and headers the API uses; any other origin gets no CORS headers, so the browser
    /// refuses the call.
    func preflight(_ request: HTTPRequest, origin: String) -> HTTPResponse {
        var response = HTTPResponse(status: 204, headers: [("Vary", "Origin")])
        if corsOrigins.containsExactly(origin), Self.isAPIPath(request.path) {
            response.headers += [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE"),
                                 ("Access-Control-Allow-Headers", "Authorization, Content-Type, DPoP"), ("Access-Control-Max-Age", "600")]
        }
        return response
    }

    /// The Prometheus text of ``Metrics``.
    var metricsResponse: HTTPResponse {
        var text = ceremonies.metrics.text
        if let sql = store as? SQLStore, sql.durableCommits > 0 {
            // Group commit: how many durable commits shared each sync of the WAL.
            text += "# HELP signet_sqlite_durable_commits_total Commits that waited for the WAL to be on disk.\n# TYPE signet_sqlite_durable_commits_total counter\n"
            text += "signet_sqlite_durable_commits_total \(sql.durableCommits)\n"
            text += "# HELP signet_sqlite_wal_syncs_total fdatasync calls of the WAL made for them.\n# TYPE signet_sqlite_wal_syncs_total counter\n"
            text += "signet_sqlite_wal_syncs_total \(sql.durableSyncs)\n"
            // Held answers' writes: how many shared each transaction.
            let batches = sql.writeBatches
            text += "# HELP signet_sqlite_write_batches_total Transactions that held answers' writes, each committed before its sync.\n# TYPE signet_sqlite_write_batches_total counter\n"
            text += "signet_sqlite_write_batches_total \(batches.batches)\n"
            text += "# HELP signet_sqlite_batched_writes_total Held answers' writes in those transactions.\n# TYPE signet_sqlite_batched_writes_total counter\n"
            text += "signet_sqlite_batched_writes_total \(batches.writes)\n"
        }
        if let sql = store as? SQLStore { text += sql.sqliteTimings + sql.postgresBatching }
        // What waits to be delivered: a backlog that grows, or an oldest message that ages, is a
        // relay or a client's logout endpoint that does not answer.
        let backlog = (try? store.outboxBacklog()) ?? []
        let now = ceremonies.nowMillis
        let queues = ["mail", "backchannel_logout"].map { queue in (queue, backlog.first { $0.queue == queue }) }
        text += "# HELP signet_outbox_messages Messages waiting in the outbox, mail and logout tokens apart.\n# TYPE signet_outbox_messages gauge\n"
        for (queue, b) in queues { text += "signet_outbox_messages{queue=\"\(queue)\"} \(b?.count ?? 0)\n" }
        text += "# HELP signet_outbox_oldest_seconds How long the outbox's oldest message has waited.\n# TYPE signet_outbox_oldest_seconds gauge\n"
        for (queue, b) in queues { text += "signet_outbox_oldest_seconds{queue=\"\(queue)\"} \(b.map { max(0, now - $0.oldestCreated) / 1000 } ?? 0)\n" }
        text += logStreamMetrics()
        let keys = ceremonies.keys.metrics
        text += "# HELP signet_signing_key_age_seconds Age of the key that signs new tokens.\n# TYPE signet_signing_key_age_seconds gauge\n"
        text += "signet_signing_key_age_seconds \(keys.signerAge)\n"
        text += "# HELP signet_signing_keys_published Keys in the JWKS.\n# TYPE signet_signing_keys_published gauge\n"
        text += "signet_signing_keys_published \(keys.published)\n"
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: Array(text.utf8))
    }

    /// With durable SQLite the answer waits for the sync of what the request wrote, and the
    /// worker thread goes on to other connections meanwhile (``DeferredDurability``). A sync
    /// that fails, or a batch of writes that cannot commit, turns the answer into a 503
    /// (`database_unavailable`, or `storage_full`): nothing unsynced is reported as done.
    public func handleHeld(_ request: HTTPRequest) -> (HTTPResponse, HTTPHold?) {
        guard let sql = heldStore else { return (handle(request), nil) }
        let start = DispatchTime.now().uptimeNanoseconds
        let (response, commit) = DeferredDurability.run { routed(request) }
        guard commit > 0 else {
            record(response, since: start)
            return (response, nil)
        }
        return (response, { release in
            sql.whenDurable(commit) { error in
                guard let error else {
                    self.record(response, since: start)
                    return release(nil)
                }
                // The same route and CORS headers, so the metrics and the browser see the refusal
                // (the store reports `storage_full` for a full disk, else unavailable).
                var failed = self.answer(error, for: request)
                failed.route = response.route
                self.allowCORS(&failed, request)
                self.record(failed, since: start)
                release(failed)
            }
        })
    }

    public func unreadable(_ request: HTTPRequest?, status: Int, reason: String, detail: String) -> HTTPResponse {
        var error = AuthError(Reason(rawValue: reason) ?? .malformed, detail)
        error.status = status
        return answer(error, for: request ?? HTTPRequest(method: "", path: "", headers: [:], body: [], remoteAddress: "", requestID: ""))
    }

    public func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        var error = AuthError(.bodyTooLarge, "body larger than \(limit) bytes", publicDetail: "request body larger than \(limit) bytes")
        error.status = 413
        return answer(error, for: request)
    }

    /// The request's JSON body.
    func body(_ call: Call, form: Bool = false) throws -> JSONValue {
        try Wire.body(call.request, limit: configuration.maxBodyBytes, form: form)
    }
}

/// The listener of `metrics.listen`: `GET /metrics` and nothing else.
final class MetricsHandler: HTTPHandler, Sendable {
    let service: SignetService
    init(service: SignetService) { self.service = service }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path == "/metrics" else { return ErrorAnswer.response(AuthError(.notFound, "only /metrics here"), for: request) }
        guard request.method == "GET" else {
            var refusal = ErrorAnswer.response(AuthError(.methodNotAllowed, "\(request.method) on /metrics"), for: request)
            refusal.headers.append(("Allow", "GET, HEAD"))
            return refusal
        }
        return service.metricsResponse
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { service.bodyTooLarge(request, limit: limit) }
}
