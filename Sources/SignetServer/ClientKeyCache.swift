import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetWebAuthn

/// The keys of clients that publish them at a `jwks_uri`, fetched over HTTPS and kept
/// (``SignetAuth/ClientKeySource``). A set is used for ``fresh`` seconds, then fetched again when
/// next needed; an assertion naming a key the set lacks fetches it at once, but not within
/// ``refreshInterval`` of the last fetch. When a fetch fails, the last set is used for up to
/// ``stale`` seconds after it was fetched, so a client's key server that is down for a while
/// does not lock the client out. One fetch at a time per client: requests that need the same
/// set wait for it rather than each fetching it.
///
/// A fetch runs in the request that needs it, bounded by ``timeout``; no redirect is followed,
/// the TLS certificate must verify, and a set larger than ``maxBytes`` or not a JWK Set of at most
/// ten signing keys is refused as a registration's would be.
final class ClientKeyCache: ClientKeySource, @unchecked Sendable {
    struct Entry {
        let uri: String
        var keys: [JSONObject]?
        var fetchedAt: Date
        /// When a fetch last failed, and why: not tried again within ``refreshInterval``.
        var failure: (at: Date, detail: String)?
    }

    static let fresh: TimeInterval = 300
    static let refreshInterval: TimeInterval = 30
    static let stale: TimeInterval = 86_400
    static let timeout = 5
    static let maxBytes = 64 << 10

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// One lock per client, held while its set is fetched.
    private var fetches: [String: NSLock] = [:]
    let clock: @Sendable () -> Date
    /// The system's CAs, ``timeout``, ``maxBytes``.
    let options = HTTPSOptions(timeout: ClientKeyCache.timeout, maxBytes: ClientKeyCache.maxBytes, userAgent: "signet-client-keys")

    init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
    }

    func keys(clientID: String, uri: String, refresh: Bool) throws(ClientKeyFailure) -> [JSONObject] {
        if let keys = kept(clientID, uri, refresh: refresh) { return keys }
        let flight = lock.withLock {
            if let existing = fetches[clientID] { return existing }
            let made = NSLock()
            fetches[clientID] = made
            return made
        }
        flight.lock()
        defer { flight.unlock() }
        // Another request may have fetched it while this one waited.
        if let keys = kept(clientID, uri, refresh: refresh, justFetched: true) { return keys }
        let now = clock()
        let previous = lock.withLock { entries[clientID].flatMap { $0.uri == uri ? $0 : nil } }
        if let failure = previous?.failure, now.timeIntervalSince(failure.at) < Self.refreshInterval {
            return try usable(previous, now: now, failure: failure.detail)
        }
        do {
            let keys = try fetch(uri)
            lock.withLock { entries[clientID] = Entry(uri: uri, keys: keys, fetchedAt: now) }
            return keys
        } catch {
            lock.withLock {
                var entry = previous ?? Entry(uri: uri, keys: nil, fetchedAt: .distantPast)
                entry.failure = (now, error.detail)
                entries[clientID] = entry
            }
            return try usable(previous, now: now, failure: error.detail)
        }
    }

    /// The kept set when it may be used without a fetch: fresh enough, or, for a refresh, fetched
    /// within ``refreshInterval`` (`justFetched`: only that).
    private func kept(_ clientID: String, _ uri: String, refresh: Bool, justFetched: Bool = false) -> [JSONObject]? {
        lock.withLock {
            guard let entry = entries[clientID], entry.uri == uri, let keys = entry.keys else { return nil }
            let age = clock().timeIntervalSince(entry.fetchedAt)
            if age < Self.refreshInterval { return keys }
            return !refresh && !justFetched && age < Self.fresh ? keys : nil
        }
    }

    /// After a failed fetch: the last set while it is younger than ``stale``.
    private func usable(_ entry: Entry?, now: Date, failure: String) throws(ClientKeyFailure) -> [JSONObject] {
        guard let entry, let keys = entry.keys, now.timeIntervalSince(entry.fetchedAt) < Self.stale else {
            throw ClientKeyFailure(failure)
        }
        return keys
    }

    func fetch(_ uri: String) throws(ClientKeyFailure) -> [JSONObject] { try Self.fetch(uri, options: options) }

    /// One GET of the set, checked (also `signet doctor`'s, with its options).
    static func fetch(_ uri: String, options: HTTPSOptions) throws(ClientKeyFailure) -> [JSONObject] {
        let response: HTTPSResponse
        do {
            response = try HTTPS.get(uri, options: options)
        } catch {
            throw ClientKeyFailure("fetching \(uri.prefix(200)) failed: \(error)")
        }
        guard response.status == 200 else { throw ClientKeyFailure("\(uri.prefix(200)) answered \(response.status)") }
        guard !response.truncated, response.body.count <= Self.maxBytes else { throw ClientKeyFailure("\(uri.prefix(200)) sent more than \(Self.maxBytes >> 10) KiB") }
        guard let value = try? StrictJSON(maxDepth: 8, maxLength: Self.maxBytes).parse(response.body) else {
            throw ClientKeyFailure("\(uri.prefix(200)) sent no JSON")
        }
        do {
            return try JWKSet.keys(value)
        } catch {
            throw ClientKeyFailure("\(uri.prefix(200)) sent no usable JWK Set: \(error.detail)")
        }
    }
}
