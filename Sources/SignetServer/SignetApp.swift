public import Foundation
public import SignetAuth
import SignetCrypto
public import SignetHTTP
import SignetStore

/// A running Signet: store, keys, service and HTTP server, started from a configuration.
/// `signet serve`, the tests and the benchmark all start Signet this way.
public final class SignetApp: @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    public let service: SignetService
    public let server: HTTPServer

    /// The address clients use.
    public var baseURL: String { "http://\(configuration.listenHost):\(server.port)" }

    /// Opens the database named by the configuration: `sqlite:PATH`, or `postgres://...` with a
    /// pool of `connections`.
    public static func openStore(_ database: String, connections: Int = 8, durable: Bool = true) throws -> any Store {
        if database.hasPrefix("sqlite:") { return try SQLStore(path: String(database.dropFirst("sqlite:".count)), durable: durable) }
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            return try SQLStore(postgres: database, connections: connections)
        }
        throw ConfigurationError("database must be sqlite:PATH or postgres://... (got \(database))")
    }

    /// Starts Signet. `environment` supplies `SIGNET_KEK`; `clock` is injected for tests. With
    /// `listen` false nothing listens: requests go to ``service`` as values (the in-process mode
    /// of the tests).
    public init(
        configuration: ServerConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
        store: (any Store)? = nil, clock: @escaping @Sendable () -> Date = { Date() }, log: AccessLog? = nil, listen: Bool = true
    ) throws {
        self.configuration = configuration
        let store = try store ?? SignetApp.openStore(configuration.database, connections: configuration.workerThreads + 2, durable: configuration.durability == "full")
        self.store = store
        let kek = try KeyEncryptionKey.load(environment: environment, file: configuration.keyEncryptionKeyFile)
        let keys = try KeyRing(store: store, kek: kek, retentionSeconds: max(configuration.accessTokenLifetime, configuration.idTokenLifetime), clock: clock)
        var anchors: [Certificate] = []
        for file in configuration.trustAnchorFiles {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else { throw ConfigurationError("cannot read trust anchor file \(file)") }
            anchors += try Certificate.parsePEM(pem)
        }
        service = SignetService(configuration: configuration, store: store, keys: keys, kek: kek, trustAnchors: anchors, clock: clock)
        var http = HTTPServer.Configuration()
        http.host = configuration.listenHost
        http.port = configuration.listenPort
        http.threads = configuration.workerThreads
        http.connectionLimit = configuration.maxConnections
        http.perIPConnectionLimit = configuration.maxConnectionsPerIP
        http.idleTimeout = configuration.idleTimeout
        http.requestDeadline = configuration.requestDeadline
        http.maxBodyBytes = configuration.maxBodyBytes
        http.connectionMemoryBytes = configuration.connectionMemoryBytes
        server = HTTPServer(configuration: http, handler: service, log: log ?? AccessLog(enabled: configuration.accessLog))
        if listen { try server.start() }
        // Used-session marks are needed only until their sessions expire.
        let purge = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "signet.purge"))
        purge.schedule(deadline: .now() + 60, repeating: 60)
        let retention = Int64(configuration.auditRetentionDays) * 86_400_000
        purge.setEventHandler { [store] in
            let now = Int64(clock().timeIntervalSince1970 * 1000)
            _ = try? store.purgeUsedSessions(now: now)
            // Rate-limit windows that ended, and audit rows past audit.retention_days.
            _ = try? store.purge(now: now, auditBefore: now - retention)
        }
        purge.resume()
        purger = purge
    }

    private var purger: (any DispatchSourceTimer)?

    deinit { purger?.cancel() }

    /// Stops accepting, finishes requests in flight, stops.
    public func shutdown(grace: TimeInterval = 10) {
        purger?.cancel()
        server.shutdown(grace: grace)
    }
}
