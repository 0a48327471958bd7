import SignetAPI
import Synchronization
public import Foundation
public import SignetCrypto
public import SignetWebAuthn

/// Where a request came from, for the audit trail: never a token, body or header value.
public struct RequestContext: Sendable {
    public var remoteAddress: String
    public var requestID: String
    /// The request's `Accept-Language` (RFC 9110 §12.5.4), for mail to an address without an
    /// account yet.
    public var acceptLanguage: String?
    /// The request's `DPoP` header (RFC 9449 §4.1), for a token grant.
    public var dpop: String?
    /// The request's `User-Agent` (RFC 9110 §10.1.5), kept with an app's session (its
    /// refresh tokens) to show where it is: on the token endpoint's kind of route, where refresh
    /// tokens are made (as ``basic``); `nil` elsewhere (the hosted pages pass a browser's their own way).
    public var userAgent: String?
    /// The client ID and secret of `Authorization: Basic` (RFC 6749 §2.3.1), on the routes where a
    /// client may authenticate that way (the token endpoint and its kin); `nil` elsewhere.
    public var basic: (id: String, secret: String)?
    /// `client_assertion` and its type (`private_key_jwt`, OIDC Core §9), on the same routes as
    /// ``basic``, when the request carries either.
    public var assertion: ClientAssertion?
    /// The client the assertion names (its `iss`, not yet verified), for a request without `client_id`.
    public var assertionIssuer: String? { assertion?.jwt.flatMap(ClientAssertion.issuer) }
    public init(remoteAddress: String, requestID: String, acceptLanguage: String? = nil, dpop: String? = nil, basic: (id: String, secret: String)? = nil,
                userAgent: String? = nil) {
        self.userAgent = userAgent
        self.remoteAddress = remoteAddress
        self.requestID = requestID
        self.acceptLanguage = acceptLanguage
        self.dpop = dpop
        self.basic = basic
    }
    /// The server on its own (a background job: mail, log streams, rotations): no address, no request.
    public static let server = RequestContext(remoteAddress: "", requestID: "")
    /// Where the request came from, as a session keeps it.
    public var origin: RequestOrigin {
        RequestOrigin(remote: remoteAddress.isEmpty ? nil : remoteAddress, userAgent: Ceremonies.clippedUserAgent(userAgent))
    }
    /// The first of the request's languages Signet writes in (``Notice/languages``), or `en`.
    public var language: String { Notice.language(acceptLanguage: acceptLanguage) }
}

/// Every ceremony and policy of Signet (DESIGN.md, "Architecture": SignetAuth): sign-up, sign-in,
/// adding a passkey, tokens, device keys and actions. Typed input, typed result, or an
/// ``AuthError`` with a stable reason; nothing here knows HTTP, and the store is a protocol.
///
/// There is one registration path (``verifyRegistration(_:session:)``) and one assertion path
/// (``verifyAssertion(_:challenge:expectedUser:allowCredentials:requireUserVerification:)``):
/// sign-up, add-passkey and passkey-approved actions all go through them, so a policy such as
/// attestation trust holds on every path.
public final class Ceremonies: Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    public let keys: KeyRing
    public let metrics = Metrics()
    let rp: RelyingParty
    let clock: @Sendable () -> Date
    let random: RandomBytes
    let sessions: SessionSealer
    /// The key of the passkey IDs shown for usernames without one (``decoyCredential(_:)``).
    let decoyKey: [UInt8]
    /// The key of the HMACs that email and recovery codes are stored as.
    let codeKey: [UInt8]
    /// Its ID, stored with each recovery code made under it.
    let codeKeyID: String
    /// Every code key a recovery code may be under, by ID: this one and those of the database's
    /// earlier key-encryption keys (``KeyEncryptionKey/rekey(store:from:to:now:)``).
    let codeKeys: [String: [UInt8]]
    /// The key queued messages are sealed under (AES-256-GCM): a code's message holds the code.
    let mailKey: [UInt8]
    /// The key log streams' `Authorization` values are sealed under.
    let logStreamKey: [UInt8]
    /// The key of DPoP nonces.
    let nonceKey: [UInt8]
    /// Resource DPoP proofs this instance has seen.
    let replayCache: ProofReplayCache
    /// The key of the pseudonyms that replace a deleted account's ID in the audit trail.
    let pseudonymKey: [UInt8]
    /// The key pending authorization requests are sealed under, and CSRF tokens made with.
    let authorizeKey: [UInt8]
    /// Signalled when a message is queued, so this instance's sender sends it at once.
    public let mailQueued = Wakeup()
    /// Signalled when a client first asks to hear of a session's end here: this instance's
    /// logout sender starts its beat (``Ceremonies/logoutSubscription(_:client:offline:)``).
    public let logoutSubscribed = Wakeup()
    /// Signalled when a log stream is added, made active again or rewound here, so that this
    /// instance's idle sender looks at once (``Ceremonies/addLogStream(_:by:context:)``).
    public let logStreamsChanged = Wakeup()
    /// The SHA-256 of each configured trust anchor's certificate.
    let anchorRoots: Set<[UInt8]>
    /// The FIDO Metadata Service's BLOB, when `attestation_metadata` is configured (roots by
    /// AAGUID, names, and compromised models: ``authenticatorRefusal(_:for:)``), with the
    /// SHA-256 of the roots it lists for each model; replaced whole by ``replaceMetadata(_:)``.
    let metadataState: Mutex<(blob: MetadataBLOB?, roots: [String: Set<[UInt8]>])>
    /// Whether a BLOB is configured: without one, a sign-in takes no lock to learn there is none.
    let metadataConfigured: Bool
    /// What sign-ins verify against, so a sign-in reads nothing before its one transaction.
    let credentialCache = CredentialCache()
    /// The configured clients and those in the database.
    let clients: ClientDirectory
    /// The keys of clients that publish them at a `jwks_uri`.
    let clientKeys: any ClientKeySource

    /// - Parameters:
    ///   - clock: the time, injected so tests can move it.
    ///   - random: the random source for challenges, IDs and tokens.
    ///   - kept: the keys earlier re-keys kept (``KeyEncryptionKey/keptKeys(store:kek:)``).
    public init(
        configuration: ServerConfiguration, store: any Store, keys: KeyRing, kek: [UInt8], kept: KeyEncryptionKey.KeptKeys = .init(), trustAnchors: [Certificate] = [],
        metadata: MetadataBLOB? = nil, clock: @escaping @Sendable () -> Date = { Date() }, random: @escaping RandomBytes = { SecureRandom.bytes($0) },
        clientKeys: (any ClientKeySource)? = nil
    ) {
        self.clientKeys = clientKeys ?? NoClientKeySource()
        self.configuration = configuration
        self.store = store
        self.keys = keys
        self.clock = clock
        self.random = random
        sessions = SessionSealer(kek: kek)
        decoyKey = kept.decoyKey ?? KeyEncryptionKey.decoyKey(kek)
        codeKey = KeyEncryptionKey.codeKey(kek)
        codeKeyID = KeyEncryptionKey.id(codeKey)
        codeKeys = Dictionary(kept.codeKeys.map { (KeyEncryptionKey.id($0), $0) } + [(codeKeyID, codeKey)]) { _, last in last }
        mailKey = KeyEncryptionKey.mailKey(kek)
        logStreamKey = KeyEncryptionKey.logStreamKey(kek)
        nonceKey = Digest.sha256.hmac(key: kek, data: Array("signet dpop nonce key v1".utf8))
        pseudonymKey = Digest.sha256.hmac(key: kek, data: Array("signet pseudonym key v1".utf8))
        authorizeKey = Digest.sha256.hmac(key: kek, data: Array("signet web key v1".utf8))
        replayCache = ProofReplayCache(perHolder: configuration.dpopProofsPerMinute)
        clients = ClientDirectory(configured: configuration.clients) { [store] id in try store.clientRow(id: id).map(ClientConfiguration.init) }
        var rp = RelyingParty(id: configuration.rpID, name: configuration.rpName, origins: configuration.allowedOrigins)
        rp.allowedAlgorithms = configuration.algorithms
        rp.trustAnchors = trustAnchors
        self.rp = rp
        metadataConfigured = metadata != nil
        metadataState = Mutex((metadata, Self.rootHashes(metadata)))
        anchorRoots = Set(trustAnchors.map { Digest.sha256.hash($0.der) })
        if let metadata { metrics.attestationMetadata(number: metadata.number, nextUpdate: metadata.nextUpdateDate, loaded: false) }
    }

    package var nowMillis: Int64 { Int64(clock().timeIntervalSince1970 * 1000) }

    /// 16 bytes: the time in milliseconds (6 bytes, big-endian), then 10 random bytes. Unique
    /// like a random ID, but IDs made later sort later, so the B-tree that keys on them (used
    /// auth sessions, refresh-token families) grows at its right edge, in pages already cached,
    /// instead of in a random page at every insert. For identifiers only, never for secrets.
    func timeOrderedID() -> [UInt8] {
        let ms = UInt64(max(0, nowMillis))
        return (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + random(10)
    }

    /// When a ``timeOrderedID()`` was made: its first 6 bytes, in milliseconds.
    static func madeAt(timeOrderedID id: [UInt8]) -> Int64 { id.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) } }

    /// A new account's ID: a random (version 4) UUID from the injected random source.
    func newUserID() -> String {
        var bytes = random(16)
        bytes[6] = bytes[6] & 0x0f | 0x40
        bytes[8] = bytes[8] & 0x3f | 0x80
        let t = (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])
        return UUID(uuid: t).uuidString.lowercased()
    }

    /// Random bytes from the injected source (a page's pre-session cookie).
    public func randomBytes(_ count: Int) -> [UInt8] { random(count) }

    /// Whether the store answers.
    public func healthy() -> Bool { (try? store.ping()) != nil }

    /// An audit event, to be written with a ceremony's other writes.
    func auditEvent(_ kind: AuditKind, _ outcome: String = "success", reason: String? = nil, user: String? = nil, client: String? = nil,
                    credential: String? = nil, detail: String? = nil, context: RequestContext) -> AuditEvent {
        let event = pendingAuditEvent(kind, outcome, reason: reason, user: user, client: client, credential: credential, detail: detail, context: context)
        counted(event)
        return event
    }

    /// An audit event for writes that happen only when their change does (a revocation that
    /// finds nothing writes nothing); ``counted(_:)`` adds it to `/metrics` once it committed.
    func pendingAuditEvent(_ kind: AuditKind, _ outcome: String = "success", reason: String? = nil, user: String? = nil, client: String? = nil,
                           credential: String? = nil, detail: String? = nil, context: RequestContext) -> AuditEvent {
        AuditEvent(at: nowMillis, kind: kind.rawValue, outcome: outcome, reason: reason, userID: user, clientID: client, credentialID: credential,
                   remote: context.remoteAddress, requestID: context.requestID, detail: detail.map { String($0.prefix(500)) })
    }

    /// Counts an audit event in `/metrics`.
    func counted(_ event: AuditEvent) { metrics.audit(event.kind, outcome: event.outcome) }

    /// Records an audit event that must exist whenever the answer goes out (an action token, a
    /// machine's token): unlike ``audit(_:_:reason:user:client:credential:detail:context:)``, a
    /// failure to write it fails the call.
    func recordAudit(_ kind: AuditKind, user: String? = nil, client: String? = nil, credential: String? = nil, context: RequestContext) throws {
        let event = pendingAuditEvent(kind, user: user, client: client, credential: credential, context: context)
        try store.appendAudit(event)
        counted(event)
    }

    /// Records an audit event on its own; a failure to write it is not allowed to change the answer.
    func audit(_ kind: AuditKind, _ outcome: String = "success", reason: String? = nil, user: String? = nil, client: String? = nil,
               credential: String? = nil, detail: String? = nil, context: RequestContext) {
        try? store.appendAudit(auditEvent(kind, outcome, reason: reason, user: user, client: client, credential: credential, detail: detail, context: context))
    }

    /// Records a refusal with its reason and detail. Without an account (an unauthenticated
    /// failure), or once the address is past its budget of failures (`rate_limited`, even for
    /// a caller signed in to an account), the rows an address may cause are limited, so garbage
    /// cannot grow the table without bound.
    func audit(_ kind: AuditKind, refused failure: AuthError, user: String? = nil, client: String? = nil, credential: String? = nil, context: RequestContext) {
        if failure.audited { return }
        if user == nil || failure.reason == .rateLimited, (try? count(.auditFailuresPerIP, configuration.rateLimits.auditFailuresPerIP, key: addressKey(context))) != .some(nil) { return }
        audit(kind, "failure", reason: failure.reason.rawValue, user: user, client: client, credential: credential, detail: failure.detail, context: context)
    }

    /// The client, which must exist and be allowed `grant`.
    func client(_ id: String, grant: String? = nil) throws -> ClientConfiguration {
        guard let client = clients.client(id) else { throw AuthError(.clientUnknown, "unknown client_id \"\(id.prefix(64))\"") }
        if let grant, !client.grants.contains(grant) {
            throw AuthError(.grantNotAllowed, "client \(id) may not use grant \(grant)")
        }
        return client
    }

    /// Settings for creation options, from the configuration.
    var creationSettings: CreationSettings {
        var settings = CreationSettings()
        settings.residentKey = configuration.residentKey
        settings.userVerification = configuration.userVerification
        settings.attestation = configuration.attestation
        settings.timeout = configuration.sessionTimeout * 1000
        return settings
    }

    var requireUserVerification: Bool { configuration.userVerification == "required" }
    var sessionExpiry: Int64 { nowMillis + Int64(configuration.sessionTimeout) * 1000 }
}

/// A wake-up call between threads: ``signal()`` ends the current or next ``wait(timeout:)``.
public final class Wakeup: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = false
    public init() {}
    public func signal() {
        condition.lock()
        pending = true
        condition.signal()
        condition.unlock()
    }
    /// Waits until signalled or `timeout` seconds pass; whether it was signalled.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while !pending, condition.wait(until: deadline) {}
        let signalled = pending
        pending = false
        return signalled
    }
}
