import Foundation
import SignetWebAuthn

/// Every client Signet knows: those of the configuration, then those an administrator added to
/// the database (`signet admin clients add`). The database's are read again at most every
/// `refresh` seconds, so a running server sees an added, removed or re-keyed client within that
/// time without a restart (DESIGN.md, "Management API and operations").
final class ClientDirectory: @unchecked Sendable {
    private let configured: [String: ClientConfiguration]
    private let load: @Sendable () throws -> [ClientConfiguration]
    private let refresh: TimeInterval
    private let lock = NSLock()
    private var stored: [String: ClientConfiguration] = [:]
    private var loadedAt: Date?

    init(configured: [ClientConfiguration], refresh: TimeInterval = 2, load: @escaping @Sendable () throws -> [ClientConfiguration]) {
        self.configured = Dictionary(configured.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.refresh = refresh
        self.load = load
    }

    /// The client `id`: a configured one without touching the database, else the database's as
    /// read at most `refresh` seconds ago. A failed read keeps the last list. The id matches by
    /// its bytes (RFC 6749 §2.2: a unique string): the dictionary's key matches by canonical
    /// equivalence, so `K` with U+212A KELVIN SIGN in its place would find client `K…`.
    func client(_ id: String) -> ClientConfiguration? {
        if let client = configured[id] { return client.id.isExactly(id) ? client : nil }
        lock.lock()
        defer { lock.unlock() }
        if loadedAt.map({ Date().timeIntervalSince($0) >= refresh }) ?? true {
            if let clients = try? load() { stored = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
            loadedAt = Date()
        }
        return stored[id].flatMap { $0.id.isExactly(id) ? $0 : nil }
    }

    /// Forgets the database's list, so the next lookup reads it (after a change made here).
    func invalidate() {
        lock.lock()
        loadedAt = nil
        lock.unlock()
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
    }
}
