public import Foundation
public import SignetAuth
public import SignetCrypto
public import SignetHTTP
import Synchronization
import SignetStore
import SignetCurl

/// A running Signet: store, keys, service and HTTP server, started from a configuration.
/// `signet serve`, the tests and the benchmark all start Signet this way.
public final class SignetApp: @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    public let service: SignetService
    public let server: HTTPServer

    /// The address clients use.
    public var baseURL: String {
        let host = server.host.isEmpty ? configuration.listenHost : server.host
        return "http://" + SocketAddress.authority(host, server.port)
    }

    /// Opens the database named by the configuration: `sqlite:PATH`, or `postgres://...` with a
    /// pool of `connections`. `existing`: a SQLite file that is not there, or a PostgreSQL
    /// database without Signet's tables, is an error rather than a new, empty Signet database, for
    /// the commands that read or change one a server made (a mistyped path or database name would
    /// otherwise list no accounts, or back up nothing, and say it was fine).
    public static func openStore(_ database: String, connections: Int = 8, durable: Bool = true, existing: Bool = false) throws -> any Store {
        if database.hasPrefix("sqlite:") {
            let path = String(database.dropFirst("sqlite:".count))
            if existing, !FileManager.default.fileExists(atPath: path) {
                throw ConfigurationError("there is no SQLite database at \(path): check --database or the configuration's database (signet serve makes it at its first start)")
            }
            return try SQLStore(path: path, durable: durable)
        }
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            if existing, try !PostgresAdmin.holdsSignet(url: database) {
                let name = URLComponents(string: database).map { "\($0.path.dropFirst()) on \($0.host ?? "the local server")" } ?? "named"
                throw ConfigurationError("the PostgreSQL database \(name) holds no Signet tables: check --database or the configuration's database (signet serve makes them at its first start)")
            }
            return try SQLStore(postgres: database, connections: connections)
        }
        throw ConfigurationError("database must be sqlite:PATH or postgres://... (got \(database))")
    }

    /// Starts Signet. `environment` supplies `SIGNET_KEK`; `clock` is injected for tests. With
    /// `listen` false nothing listens: requests go to ``service`` as values (the in-process mode
    /// of the tests). `upkeepInterval` is how often the upkeep and the Metadata Service's
    /// minute run: a minute (tests shorten it to see the timers work). `inheritedSocket`: the
    /// listening socket systemd's socket activation passed, listened on instead of `listen`.
    public init(
        configuration: ServerConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
        store: (any Store)? = nil, clock: @escaping @Sendable () -> Date = { Date() }, log: AccessLog? = nil, listen: Bool = true,
        upkeepInterval: TimeInterval = 60, inheritedSocket: Int32? = nil
    ) throws {
        self.configuration = configuration
        let store = try store ?? SignetApp.openStore(configuration.database, connections: configuration.workerThreads + 2, durable: configuration.durability == "full")
        self.store = store
        // Before the signing keys: a missing key, or one the database was re-keyed away from, is named as such.
        let (kek, kept) = try KeyEncryptionKey.load(for: store, environment: environment, file: configuration.keyEncryptionKeyFile)
        // With attestation_metadata.url, a start without a BLOB file that verifies fetches one first.
        let (metadata, fetched) = try Self.startMetadata(configuration, store: store, now: clock())
        metadataFetchSchedule.withLock { $0.due = clock().addingTimeInterval(fetched ? MetadataFetchSchedule.interval : 0) }
        metadataStamp.withLock { $0 = configuration.attestationMetadataFile.map(MetadataFileStamp.init(file:)) }
        let keys = try KeyRing(store: store, kek: kek, retentionSeconds: max(configuration.accessTokenLifetime, configuration.idTokenLifetime, configuration.actionTokenLifetime), clock: clock)
        service = SignetService(configuration: configuration, store: store, keys: keys, kek: kek, kept: kept,
                                trustAnchors: try Self.trustAnchors(configuration), metadata: metadata, clock: clock)
        if configuration.attestationMetadataURL != nil { service.ceremonies.metrics.attestationMetadataFetching() }
        let log = log ?? AccessLog(enabled: configuration.accessLog)
        self.log = log
        var http = HTTPServer.Configuration()
        http.host = configuration.listenHost
        http.port = configuration.listenPort
        http.threads = configuration.workerThreads
        http.connectionLimit = configuration.maxConnections
        http.perIPConnectionLimit = configuration.maxConnectionsPerIP
        let prefix = configuration.rateLimits.ipv6Prefix
        http.addressKey = { CIDR.limitKey($0, ipv6Prefix: prefix) }
        http.idleTimeout = configuration.idleTimeout
        http.requestDeadline = configuration.requestDeadline
        http.maxBodyBytes = configuration.maxBodyBytes
        http.connectionMemoryBytes = configuration.connectionMemoryBytes
        http.inheritedSocket = inheritedSocket
        server = HTTPServer(configuration: http, handler: service, log: log)
        if let transport = SignetApp.mailTransport(configuration, log: log) {
            let sender = MailSender(ceremonies: service.ceremonies, transport: transport, log: log)
            sender.start()
            mailSender = sender
        }
        // Back-Channel Logout: a beat where a client may ask for logout tokens, or has.
        let logouts = LogoutSender(ceremonies: service.ceremonies, log: log) { [store] in (try? store.hasLogoutWork()) == true }
        logouts.start(active: configuration.clients.contains { $0.backchannelLogoutURI != nil } || (try? store.hasLogoutWork()) == true)
        logoutSender = logouts
        service.ceremonies.prefetchClientKeys()
        let streams = LogStreamSender(ceremonies: service.ceremonies, log: log)
        streams.start()
        logStreamSender = streams
        if let (host, port) = configuration.metricsListen {
            var settings = HTTPServer.Configuration()
            settings.host = host
            settings.port = port
            settings.threads = 1
            settings.connectionLimit = 64
            settings.perIPConnectionLimit = 16
            metricsServer = HTTPServer(configuration: settings, handler: MetricsHandler(service: service), log: log)
        }
        if listen {
            try server.start()
            try metricsServer?.start()
        }
        purger = Self.every(upkeepInterval, "signet.purge") { [weak self] in self?.minuteOfUpkeep(now: clock()) }
        // The Metadata Service on a queue of its own: a fetch may wait on the network for
        // minutes (a minute for the BLOB, half a minute for each revocation list), and the
        // minute's purge and key rotation do not wait for it.
        if configuration.attestationMetadataFile != nil {
            metadataTimer = Self.every(upkeepInterval, "signet.metadata") { [weak self] in self?.minuteOfMetadata(now: clock()) }
        }
        scheduledBackup = ScheduledBackup(configuration: configuration, kek: kek, clock: clock, metrics: service.ceremonies.metrics, log: log)
        if listen { scheduledBackup?.start() }
        // The passkeys in use that the BLOB in force locks out, and how to find their accounts:
        // counted off the start, as the count reads every passkey.
        if let metadata {
            DispatchQueue.global(qos: .utility).async { [weak self] in self?.reportRefusedPasskeys(metadata, previous: nil, now: clock()) }
        }
    }

    /// The scheduled backup (`backup.directory`), made now when one is due, on the calling thread
    /// (tests; a server listening also looks once a minute); its path.
    @discardableResult
    package func backUpIfDue() -> String? { scheduledBackup?.runIfDue() }

    /// A timer that runs `work` every `seconds`, the first `seconds` from now, on a serial queue
    /// of its own named `label` (a run that takes longer delays the next, never overlaps it).
    static func every(_ seconds: TimeInterval, _ label: String, _ work: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        timer.schedule(deadline: .now() + seconds, repeating: seconds)
        timer.setEventHandler(handler: work)
        timer.resume()
        return timer
    }

    /// What a server does once a minute on the purge queue: the purge, then the signing keys (a
    /// new one once the newest is `tokens.signing_key_rotation_days` old; retired ones out of
    /// every instance's JWKS, their private keys gone). Nothing here waits on the network.
    package func minuteOfUpkeep(now: Date) {
        purgeExpired(now: Int64(now.timeIntervalSince1970 * 1000))
        service.ceremonies.rotateSigningKeyIfDue()
        service.ceremonies.destroyRetiredSigningKeys()
    }

    /// What a server with `attestation_metadata` does once a minute on a queue of its own: a BLOB
    /// moved into `blob_file` since is put in force; with `url`, a fetch when one is due (a day
    /// after the last, an hour after one that failed).
    package func minuteOfMetadata(now: Date) {
        reloadAttestationMetadataIfChanged(now: now)
        fetchAttestationMetadataIfDue(now: now)
    }

    /// The minute's purge of what no request can need any more. Each step's rows are counted in
    /// `/metrics` (`signet_purged_rows_total`); a step that fails is counted
    /// (`signet_purge_failures_total`) and logged with its error's code, and the others still run.
    public func purgeExpired(now: Int64) {
        let retention = Int64(configuration.auditRetentionDays) * 86_400_000
        let held = max(configuration.auditRetentionDays, configuration.logStreamHoldDays)
        // Used marks (and the other rows kept until they expire) are needed only until then.
        step("used_marks") { try store.purgeUsedSessions(now: now) }
        // Refresh tokens of sessions dead for a day.
        step("refresh_tokens") { try service.ceremonies.purgeRefreshTokens() }
        // Roles given for a time that ended, each said on its account's history.
        step("ended_roles") { try service.ceremonies.purgeEndedRoles() }
        // Rate-limit windows that ended, and audit rows past audit.retention_days; an active log
        // stream holds what its endpoint has not taken for audit.log_stream_hold_days at most.
        step("audit_events") {
            service.ceremonies.releaseLogStreamHolds(before: now - Int64(held) * 86_400_000, days: held)
            return try store.purge(now: now, auditBefore: now - retention, batch: 5_000)
        }
    }

    private func step(_ what: String, _ body: () throws -> Int) {
        do {
            service.ceremonies.metrics.purge(what, rows: try body())
        } catch {
            service.ceremonies.metrics.purge(what, rows: nil)
            let code = (error as? StoreError)?.code.rawValue ?? String(describing: type(of: error))
            log.write([("msg", .string("purge failed")), ("what", .string(what)), ("error", .string(code))])
        }
    }

    let log: AccessLog

    private var purger: (any DispatchSourceTimer)?
    private var metadataTimer: (any DispatchSourceTimer)?
    /// The BLOB file as it was when last read (``reloadAttestationMetadataIfChanged(now:)``).
    let metadataStamp = Mutex<MetadataFileStamp?>(nil)
    /// When `attestation_metadata.url` is fetched next (``fetchAttestationMetadataIfDue(now:)``).
    let metadataFetchSchedule = Mutex(MetadataFetchSchedule(due: .distantPast))
    private var scheduledBackup: ScheduledBackup?
    /// The listener of `metrics.listen`, when set.
    public private(set) var metricsServer: HTTPServer?
    private var mailSender: MailSender?
    private var logoutSender: LogoutSender?
    private var logStreamSender: LogStreamSender?

    deinit {
        purger?.cancel()
        metadataTimer?.cancel()
        scheduledBackup?.stop()
        mailSender?.stop()
        logoutSender?.stop()
        logStreamSender?.stop()
        metricsServer?.stop()
    }

    /// Where this instance's mail goes: the SMTP relay of `email.smtp_url`, else the `.eml`
    /// folder of `email.outbox_dir` (development's `./signet-mail`), else nowhere (and sign-in by
    /// email code is then off).
    static func mailTransport(_ c: ServerConfiguration, log: AccessLog) -> (any MailTransport)? {
        if let url = c.email.smtpURL {
            return SMTPTransport(settings: SMTPSettings(url: url, username: c.email.username, password: c.email.password, caFile: c.email.caFile), from: c.mailFrom)
        }
        return c.email.outboxDirectory.map { DirectoryTransport(directory: $0, log: log) }
    }

    /// The certificates of `trust_anchors`' PEM files.
    public static func trustAnchors(_ configuration: ServerConfiguration) throws -> [Certificate] {
        var anchors: [Certificate] = []
        for file in configuration.trustAnchorFiles {
            let pem = try ConfigurationError.readText(file, for: "trust anchor file", limit: ConfigurationLoader.maxFileLength)
            anchors += try Certificate.parsePEM(pem)
        }
        return anchors
    }

    /// Delivers every message due now, on the calling thread (tests, after moving the clock).
    package func sendMailNow() -> Int { mailSender?.runOnce() ?? 0 }

    /// Sends every logout token due now, after a sweep, on the calling thread (tests).
    package func sendLogoutsNow() -> Int { logoutSender?.runOnce(sweep: true) ?? 0 }

    /// Sends what every log stream has due now, on the calling thread (tests, which start the
    /// server without the sender's own beat).
    package func sendLogStreamsNow() -> Int { logStreamSender?.runOnce().delivered ?? 0 }

    /// Stops this instance's log stream sender's own beat, and returns once a pass of its under
    /// way has ended (tests then send with ``sendLogStreamsNow()``).
    package func pauseLogStreams() { logStreamSender?.pause() }

    /// The idle logout sender's look for work in the database, now rather than within the minute.
    package func lookForLogoutWork() { logoutSender?.lookForWork() }
    /// Seconds between an idle logout sender's own looks for work.
    package static var logoutIdleCheck: Double { LogoutSender.idleCheck }

    /// Stops this instance's logout sender's own beat, and returns once a pass of its under way
    /// has ended (tests then send with ``sendLogoutsNow()``).
    package func pauseLogouts() { logoutSender?.pause() }

    /// Stops this instance's mail sender's own beat, and returns once a pass of its under way has
    /// ended (tests then deliver, and finish recoveries, with ``sendMailNow()``).
    package func pauseMail() { mailSender?.pause() }

    /// Stops this instance's mail sender (tests of an instance that stops sending).
    package func stopMail() { mailSender?.stop() }

    /// Stops accepting, finishes requests in flight, stops.
    public func shutdown(grace: TimeInterval = 10) {
        purger?.cancel()
        metadataTimer?.cancel()
        scheduledBackup?.stop()
        mailSender?.stop()
        logoutSender?.stop()
        logStreamSender?.stop()
        metricsServer?.shutdown(grace: 1)
        server.shutdown(grace: grace)
    }
}
