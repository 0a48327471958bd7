import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetWebAuthn

/// The keys of clients that publish them at a `jwks_uri`, fetched over HTTPS and kept
/// (``SignetAuth/ClientKeySource``). A set is used as it is for ``fresh`` seconds; after that, up
/// to ``stale`` seconds after it was fetched, it is still used while a fetch in the background
/// replaces it, so a request waits for a fetch only when there is no set yet, or when an
/// assertion names a key the set lacks (a rotation: fetched at once, but not within
/// ``refreshInterval`` of the last fetch). A failed fetch is not tried again within
/// ``refreshInterval``, and the last set serves meanwhile, so a client's key server that is down
/// for a while does not lock the client out. One fetch at a time per client: requests that need
/// the same set wait for it rather than each fetching it.
///
/// A fetch is bounded by ``timeout``; no redirect is followed, the TLS certificate must verify,
/// and a set larger than ``maxBytes`` or not a JWK Set of at most ten signing keys is refused as
/// a registration's would be.
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
    /// Clients whose set a background fetch is replacing.
    private var refreshing: Set<String> = []
    let clock: @Sendable () -> Date
    /// The system's CAs, ``timeout``, ``maxBytes``.
    let options = HTTPSOptions(timeout: ClientKeyCache.timeout, maxBytes: ClientKeyCache.maxBytes, userAgent: "signet-client-keys")

    init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
    }

    func keys(clientID: String, uri: String, refresh: Bool) throws(ClientKeyFailure) -> [JSONObject] {
        if let keys = kept(clientID, uri, refresh: refresh) { return keys }
        if !refresh, let keys = staleKeys(clientID, uri) {
            refreshInBackground(clientID, uri)
            return keys
        }
        return try fetchOnce(clientID, uri, refresh: refresh)
    }

    /// A set past ``fresh`` but younger than ``stale``.
    private func staleKeys(_ clientID: String, _ uri: String) -> [JSONObject]? {
        lock.withLock {
            guard let entry = entries[clientID], entry.uri == uri, let keys = entry.keys, clock().timeIntervalSince(entry.fetchedAt) < Self.stale else { return nil }
            return keys
        }
    }

    /// One task fetches the sets in turn, however many clients there are (a deployment's every
    /// `jwks_uri` client at start), so a start never makes a thread a client.
    func prefetch(_ clients: [(clientID: String, uri: String)]) {
        let wanted = lock.withLock { clients.filter { entries[$0.clientID]?.uri != $0.uri && refreshing.insert($0.clientID).inserted } }
        fetchInBackground(wanted, remembering: false)
    }

    /// Replaces the client's set off the request's thread, unless a fetch already does.
    private func refreshInBackground(_ clientID: String, _ uri: String) {
        guard lock.withLock({ refreshing.insert(clientID).inserted }) else { return }
        fetchInBackground([(clientID, uri)], remembering: true)
    }

    /// One task that fetches each client's set in turn, each client marked ``refreshing`` by the
    /// caller and unmarked once its fetch is done.
    private func fetchInBackground(_ clients: [(clientID: String, uri: String)], remembering: Bool) {
        guard !clients.isEmpty else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            for (clientID, uri) in clients {
                _ = try? fetchOnce(clientID, uri, refresh: false, remembering: remembering)
                _ = lock.withLock { refreshing.remove(clientID) }
            }
        }
    }

    /// A fetch of the client's set, one at a time per client; what the one before it fetched
    /// when that was moments ago, and the last set (while young enough) when it fails. Not
    /// `remembering` (a prefetch), a failure is not kept to hold off the next fetch.
    private func fetchOnce(_ clientID: String, _ uri: String, refresh: Bool, remembering: Bool = true) throws(ClientKeyFailure) -> [JSONObject] {
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
            guard remembering else { throw error }
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
