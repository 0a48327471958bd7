import Foundation
import SignetWebAuthn

/// Every client Signet knows: those of the configuration, then those an administrator added to
/// the database (`signet admin clients add`, `POST /api/v2/clients`). A client of the database is
/// read by its ID when asked for and kept at most `refresh` seconds, so a running server sees an
/// added, changed or removed client within that time without a restart (DESIGN.md, "Management
/// API and operations"). Each lookup reads one row, however many clients there are.
final class ClientDirectory: @unchecked Sendable {
    private struct Entry {
        /// `nil`: no such client when it was read.
        let client: ClientConfiguration?
        let at: Date
    }

    private let configured: [String: ClientConfiguration]
    private let load: @Sendable (String) throws -> ClientConfiguration?
    private let refresh: TimeInterval
    /// Answers kept at most; a full directory first forgets the stale ones, then all.
    private let capacity: Int
    private let lock = NSLock()
    /// By the ID's bytes: a `String` key matches by canonical equivalence, so an ID with U+212A
    /// KELVIN SIGN would find (or, answered "none", hide) the client whose ID has `K` there.
    private var stored: [[UInt8]: Entry] = [:]
    /// Moved by ``invalidate()``: a read begun before it is not kept.
    private var generation = 0

    /// The longest ID looked up in the database, in bytes.
    static let maxStoredID = 128

    init(configured: [ClientConfiguration], refresh: TimeInterval = 2, capacity: Int = 4096,
         load: @escaping @Sendable (String) throws -> ClientConfiguration?) {
        self.configured = Dictionary(configured.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.refresh = refresh
        self.capacity = capacity
        self.load = load
    }

    /// The client `id`: a configured one without touching the database, else the database's as
    /// read at most `refresh` seconds ago. A failed read keeps the last answer. The id matches by
    /// its bytes (RFC 6749 §2.2: a unique string).
    func client(_ id: String) -> ClientConfiguration? {
        if let client = configured[id] { return client.id.isExactly(id) ? client : nil }
        // The database's IDs are short (`c_` and 16 characters); a longer one names no client of
        // it, and is neither read nor kept (a kept answer holds its ID).
        guard id.utf8.count <= Self.maxStoredID else { return nil }
        let key = Array(id.utf8)
        let now = Date()
        lock.lock()
        let kept = stored[key]
        let started = generation
        lock.unlock()
        if let kept, now.timeIntervalSince(kept.at) < refresh { return Self.exact(kept.client, id) }
        // Read without the lock: a slow read holds up no lookup of another client.
        let client: ClientConfiguration?
        do {
            client = try load(id)
        } catch {
            return Self.exact(kept?.client, id)
        }
        lock.lock()
        if generation == started {
            if stored.count >= capacity { stored = stored.filter { now.timeIntervalSince($0.value.at) < refresh } }
            if stored.count >= capacity { stored.removeAll() }
            stored[key] = Entry(client: client, at: now)
        }
        lock.unlock()
        return Self.exact(client, id)
    }

    private static func exact(_ client: ClientConfiguration??, _ id: String) -> ClientConfiguration? {
        guard let client = client ?? nil else { return nil }
        return client.id.isExactly(id) ? client : nil
    }

    /// Forgets every answer, so the next lookups read the database (after a change made here).
    func invalidate() {
        lock.lock()
        stored.removeAll()
        generation += 1
        lock.unlock()
    }

    /// Answers kept now (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return stored.count
    }

    func isConfigured(_ id: String) -> Bool { configured[id] != nil }
}

extension ClientConfiguration {
    /// A client as the database keeps it.
    public init(_ row: ClientRow) {
        self.init(id: row.id, grants: row.grants, audiences: row.audiences, secretHash: row.secretHash)
        name = row.name
        scopes = row.scopes
        redirectURIs = row.redirectURIs
        postLogoutRedirectURIs = row.postLogoutRedirectURIs
        backchannelLogoutURI = row.backchannelLogoutURI
        requirePushedRequests = row.requirePushedRequests
        // Checked when it was stored. A set that no longer reads as one becomes a key that fits
        // no algorithm: the client stays confidential (never public for want of keys) and no
        // assertion of it verifies.
        if let text = row.jwks { jwks = (try? JWKSet.keys(text: text)) ?? [[:]] }
        jwksURI = row.jwksURI
        requiredRoles = row.requiredRoles
        minimumACR = row.minimumACR
        refreshTokenLifetime = row.refreshTokenLifetime
        refreshTokenAbsoluteLifetime = row.refreshTokenAbsoluteLifetime
        refreshTokenRetryWindow = row.refreshTokenRetryWindow
    }
}
