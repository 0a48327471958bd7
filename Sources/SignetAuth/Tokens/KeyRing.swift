public import Foundation
public import SignetCrypto
public import SignetWebAuthn

/// The key-encryption key: 32 bytes that encrypt signing keys in the database. It lives outside
/// the database: in `SIGNET_KEK` (base64url), or in a file readable by its owner only.
public enum KeyEncryptionKey {
    /// The key from `SIGNET_KEK`, else from `file` (which must be readable by its owner only),
    /// else a new one from `random`, written to `file` with mode 0600.
    public static func load(environment: [String: String], file: String, random: RandomBytes = { SecureRandom.bytes($0) }) throws -> [UInt8] {
        if let text = environment["SIGNET_KEK"] {
            return try fromEnvironment(text, variable: "SIGNET_KEK", fallback: file)
        }
        let manager = FileManager.default
        if manager.fileExists(atPath: file) {
            let attributes = try manager.attributesOfItem(atPath: file)
            if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
                throw ConfigurationError("key-encryption key file \(file) is readable by others (mode \(String(mode, radix: 8))); run: chmod 600 \(file)")
            }
            let data = try ConfigurationError.read(file, for: "key-encryption key file", limit: 4096)
            guard let key = Base64URL.decode(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
                  key.count == 32
            else { throw ConfigurationError("key-encryption key file \(file) does not hold 32 bytes in base64url") }
            return key
        }
        let key = random(32)
        do {
            try SecretFile.save(Data((Base64URL.encode(key) + "\n").utf8), to: file)
        } catch {
            throw ConfigurationError("cannot create key-encryption key file \(file)")
        }
        return key
    }

    /// The key in an environment variable (`SIGNET_KEK`, or `SIGNET_NEW_KEK` for a re-key);
    /// whitespace around it is ignored, as in the file. Set but empty (an `Environment=SIGNET_KEK=`
    /// line, or `$UNSET`) is refused, never read as "use the `fallback`".
    public static func fromEnvironment(_ value: String, variable: String, fallback: String) throws -> [UInt8] {
        let text = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw ConfigurationError("\(variable) is set but empty: give the key (signet keys kek makes one), or unset it to use \(fallback)")
        }
        guard let key = Base64URL.decode(text) else {
            throw ConfigurationError("\(variable) is not base64url (A-Z, a-z, 0-9, - and _): give the 43 characters signet keys kek prints")
        }
        guard key.count == 32 else {
            throw ConfigurationError("\(variable) holds \(key.count) bytes; a key-encryption key is 32, the 43 characters signet keys kek prints")
        }
        return key
    }
}

/// Token-signing keys: ES256 keys kept in the database, encrypted under the key-encryption key.
/// A new key is published at once but signs only after ``signingDelay``, when every cached copy
/// of the JWKS (``jwksMaxAge``) holds it, so no verifier meets a `kid` it has not been shown; the
/// key it replaces signs until then and stays published until every token it signed has expired.
/// Every instance reloads from the database now and then, so a rotation by one is seen by all.
public final class KeyRing: @unchecked Sendable {
    struct Entry {
        let kid: String
        let publicKey: PublicKey
        let createdAt: Int64
        let retiredAt: Int64?
    }

    private let store: any Store
    private let kek: [UInt8]
    private let clock: @Sendable () -> Date
    private let random: RandomBytes
    /// Seconds a retired key stays published: the longest token lifetime.
    private let retention: Int64
    private let lock = NSLock()
    private var signer: (kid: String, key: PrivateKey)
    /// Keys already imported, by their stored bytes (the signer by kid and sealed bytes, the
    /// published keys by SPKI), so a reload imports only what is new.
    private let imported = BoundedCache<[UInt8], PrivateKey>(capacity: 1)
    private let importedPublic = BoundedCache<[UInt8], PublicKey>(capacity: heldLimit)
    private var entries: [Entry] = []
    private var loadedAt = Date.distantPast
    private var openFailure: String?
    /// When an unknown `kid` last caused a reload.
    private var missReloadAt = Date.distantPast
    /// Seconds between an instance's reads of the key table.
    public static let reloadInterval: TimeInterval = 10
    /// How long a verifier may cache the JWKS (its `Cache-Control: max-age`).
    public static let jwksMaxAge = 60
    /// Seconds from a key's creation to its first signature: an instance that has not reloaded
    /// yet may serve the JWKS without it for ``reloadInterval``, and a verifier may keep that
    /// copy for ``jwksMaxAge``.
    public static let signingDelay = Int64(jwksMaxAge) + Int64(reloadInterval)
    /// An unknown `kid` (a key another instance just made, or a forged header) reloads the keys at
    /// most once in this many seconds, so a flood of made-up kids costs no database reads.
    static let missReloadInterval: TimeInterval = 5
    /// The most signing keys the database holds at once, retired ones until they are destroyed
    /// (a day after they stop signing): a rotation past it is refused
    /// (``StoreError/Code/signingKeyLimit``). A scheduled rotation adds two or three a day at
    /// most; the rest is room for rotations by hand. Without it, a loop of rotations (a faulty
    /// script, a stolen `create:signing_keys` token) would grow the JWKS every verifier downloads,
    /// and every instance would import each key again at every reload, once the keys outgrew
    /// the cache of imported ones (this many).
    public static let heldLimit = 10
    /// Reloads caused by unknown kids (for tests).
    public private(set) var missReloads = 0
    /// Reloads done, of any cause (for tests).
    public private(set) var reloads = 0

    /// - Parameters:
    ///   - clock: the time, for key ages and reload intervals; injected so tests can move it.
    ///   - random: the source of key IDs.
    public init(store: any Store, kek: [UInt8], retentionSeconds: Int, clock: @escaping @Sendable () -> Date = { Date() },
                random: @escaping RandomBytes = { SecureRandom.bytes($0) }) throws {
        self.store = store
        self.kek = kek
        self.clock = clock
        self.random = random
        self.retention = Int64(retentionSeconds) * 1000
        if try store.signingKeys().isEmpty { _ = try KeyRing.create(store: store, kek: kek, retireOthers: false, now: clock(), random: random) }
        signer = ("", try PrivateKey.generate(.ec(.p256)))
        try reload()
    }

    /// Makes a new signing key; with `retireOthers` the earlier ones are retired (rotation): the
    /// key, the retirements and `writes(kid)` (its audit row) in one transaction.
    @discardableResult
    public static func create(store: any Store, kek: [UInt8], retireOthers: Bool, now date: Date = Date(),
                              random: RandomBytes = { SecureRandom.bytes($0) }, writes: (_ kid: String) -> [StoreWrite] = { _ in [] }) throws -> String {
        let row = try newKey(kek: kek, at: Int64(date.timeIntervalSince1970 * 1000), random: random)
        if retireOthers {
            // No key is created after the end of time: the rotation always happens.
            _ = try store.rotateSigningKey(row, unlessCreatedAfter: .max, limit: Self.heldLimit, writes: writes(row.kid))
        } else {
            try store.insertSigningKey(row)
        }
        return row.kid
    }

    /// A new ES256 key's row, its private key sealed under `kek` with its `kid` as associated data.
    static func newKey(kek: [UInt8], at now: Int64, random: RandomBytes) throws -> SigningKeyRow {
        let key = try PrivateKey.generate(.ec(.p256))
        let kid = Base64URL.encode(random(9))
        let sealed = try AESGCM.seal(key.der, key: kek, aad: Array(kid.utf8))
        return SigningKeyRow(kid: kid, algorithm: "ES256", encryptedPrivateKey: sealed, publicKey: key.publicKey.spki, createdAt: now)
    }

    /// Scheduled rotation: once the newest signing key is `seconds` old, adds a key and retires
    /// the others, as `signet keys rotate` does, and returns its `kid` (nil while none is due).
    /// Instances that find it due at once add one key between them
    /// (``Store/rotateSigningKey(_:unlessCreatedAfter:)``). Nothing is added while this
    /// instance's key-encryption key does not open the key that signs: a key sealed under a key
    /// the database was re-keyed away from could be opened by no restarted server.
    /// `writes(kid)` (its audit row) go in the rotation's transaction.
    public func rotateIfOlder(than seconds: Int64, writes: (_ kid: String) -> [StoreWrite] = { _ in [] }) throws -> String? {
        let now = Int64(clock().timeIntervalSince1970 * 1000)
        let cutoff = now - seconds * 1000
        guard let newest = try store.signingKeys().map(\.createdAt).max(), newest <= cutoff else { return nil }
        try reload()
        let row = try Self.newKey(kek: kek, at: now, random: random)
        guard try store.rotateSigningKey(row, unlessCreatedAfter: cutoff, limit: Self.heldLimit, writes: writes(row.kid)) else { return nil }
        // Published here at once; the other instances within reloadInterval, well before it signs.
        try reload()
        return row.kid
    }

    /// Re-reads the keys from the database. A key whose stored bytes are those already loaded
    /// is kept, not imported again: OpenSSL's decoders take about 4.7M instructions for the
    /// private key and 1.4M for a public one (callgrind), all on the request thread that found
    /// the ring stale, every ``reloadInterval``.
    public func reload() throws {
        let rows = try store.signingKeys()
        let now = Int64(clock().timeIntervalSince1970 * 1000)
        guard let newest = Self.signer(among: rows, now: now) else { throw ConfigurationError("no signing key in the database") }
        let privateKey: PrivateKey
        do {
            privateKey = try imported.value(for: Array(newest.kid.utf8) + [0] + newest.encryptedPrivateKey) {
                try PrivateKey(der: AESGCM.open(newest.encryptedPrivateKey, key: kek, aad: Array(newest.kid.utf8)))
            }
        } catch {
            let failure = "signing key \(newest.kid) cannot be decrypted: the key-encryption key is not the one it was stored under"
            // The keys loaded before go on signing; tried again after the interval, not at every request.
            lock.lock()
            openFailure = failure
            loadedAt = clock()
            lock.unlock()
            throw ConfigurationError(failure)
        }
        let published = try rows.filter { $0.retiredAt.map { $0 + publishedAfterRetirement > now } ?? true }.map { row in
            Entry(kid: row.kid, publicKey: try importedPublic.value(for: row.publicKey) { try PublicKey(spki: row.publicKey) },
                  createdAt: row.createdAt, retiredAt: row.retiredAt)
        }
        lock.lock()
        signer = (newest.kid, privateKey)
        entries = published
        openFailure = nil
        loadedAt = clock()
        reloads += 1
        lock.unlock()
    }

    /// Milliseconds a retired key may still sign: up to ``signingDelay`` (plus a reload) after
    /// its successor came.
    private static let signsAfterRetirement = (signingDelay + Int64(reloadInterval)) * 1000
    /// Milliseconds a retired key stays in this ring's JWKS: while it may sign, and as long again
    /// as the tokens it signed live (``retention``).
    private var publishedAfterRetirement: Int64 { Self.signsAfterRetirement + retention }

    /// When a key retired at `retiredAt` (milliseconds) is destroyed: once it may no longer
    /// sign (``signingDelay`` and a reload after it) and every token it signed has expired, with
    /// tokens of the longest lifetime any configuration allows
    /// (``ServerConfiguration/longestTokenLifetime``), so that no instance, however its token
    /// lifetimes are set, still publishes it.
    public static func destroyedAt(retiredAt: Int64) -> Int64 { retiredAt + destroyedAfterRetirement }

    /// Milliseconds from a key's retirement to its destruction (``destroyedAt(retiredAt:)``).
    private static let destroyedAfterRetirement = signsAfterRetirement + Int64(ServerConfiguration.longestTokenLifetime) * 1000

    /// Deletes the retired keys past ``destroyedAt(retiredAt:)`` (never sooner than this ring
    /// stops publishing them), their sealed private keys with them (NIST SP 800-57 Part 1: a
    /// private signature key is destroyed once its use is over). Such a key verifies no live
    /// token, and kept it would sign for whoever later obtains the database and its
    /// key-encryption key. Returns their `kid`s; `writes(kids)` (their audit rows) go in the
    /// deletion's transaction.
    public func destroyRetired(writes: (_ kids: [String]) -> [StoreWrite] = { _ in [] }) throws -> [String] {
        let now = Int64(clock().timeIntervalSince1970 * 1000)
        return try store.deleteSigningKeys(retiredBefore: now - max(Self.destroyedAfterRetirement, publishedAfterRetirement), writes: writes)
    }

    /// The key that signs at `now` (milliseconds): the newest key published for at least
    /// ``signingDelay``; while none has been (a first start, or rotations in quick succession),
    /// the one published longest. A key retired longer ago than it may sign
    /// (``signsAfterRetirement``) never signs again, even when the key after it was revoked:
    /// the key never retired does, at once.
    static func signer(among rows: [SigningKeyRow], now: Int64) -> SigningKeyRow? {
        let mayStillSign = rows.filter { row in row.retiredAt.map { now - $0 < signsAfterRetirement } ?? true }
        let order = (mayStillSign.isEmpty ? rows : mayStillSign).sorted { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
        return order.last { $0.createdAt + signingDelay * 1000 <= now } ?? order.first
    }

    /// Revokes the key `kid` (`PUT /api/v2/keys/signing/{kid}/revoke`, `signet keys revoke`):
    /// deleted now with its sealed private key, out of this ring's JWKS at once and out of every
    /// other instance's at its next reload (``reloadInterval``); a token it signed no longer
    /// verifies. The key that signs may go when a key never retired remains, which then signs
    /// at once (``signer(among:now:)``). `false` for no such key; throws
    /// ``StoreError/Code/conflict`` for the last key never retired. `writes` (its audit row) go
    /// in the deletion's transaction.
    public func revoke(kid: String, writes: [StoreWrite]) throws -> Bool {
        guard try store.revokeSigningKey(kid: kid, writes: writes) else { return false }
        try reload()
        return true
    }

    /// For `signet keys status`: the `kid` that signs at `now` (milliseconds) among `rows`, and
    /// when the scheduled rotation is next due (nil with `rotationDays` 0).
    public static func schedule(_ rows: [SigningKeyRow], now: Int64, rotationDays: Int) -> (signer: String?, nextRotation: Int64?) {
        let next = rotationDays > 0 ? rows.map(\.createdAt).max().map { $0 + Int64(rotationDays) * 86_400_000 } : nil
        return (signer(among: rows, now: now)?.kid, next)
    }

    private func reloadIfStale() {
        lock.lock()
        let stale = clock().timeIntervalSince(loadedAt) > KeyRing.reloadInterval
        lock.unlock()
        if stale { try? reload() }
    }

    /// Why the newest signing key does not open, while it does not: the database was re-keyed
    /// (`signet keys rekey`) or given a key under another key-encryption key while this server
    /// ran. It keeps signing with the key it holds; `/healthz` says it needs restarting.
    public var keyFailure: String? {
        reloadIfStale()
        lock.lock()
        defer { lock.unlock() }
        return openFailure
    }

    /// For `/metrics`: the age in seconds of the key that signs new tokens (a rotation that
    /// stopped happening shows as an age past `tokens.signing_key_rotation_days`), and how many
    /// keys the JWKS holds.
    public var metrics: (signerAge: Int64, published: Int) {
        reloadIfStale()
        lock.lock()
        defer { lock.unlock() }
        let created = entries.first { $0.kid == signer.kid }?.createdAt
        return (created.map { (Int64(clock().timeIntervalSince1970 * 1000) - $0) / 1000 } ?? 0, entries.count)
    }

    /// The key that signs new tokens.
    public var signingKey: (kid: String, key: PrivateKey) {
        reloadIfStale()
        lock.lock()
        defer { lock.unlock() }
        return signer
    }

    /// A published key by `kid`; an unknown kid triggers a reload (another instance may have
    /// rotated), at most one per ``missReloadInterval``.
    public func publicKey(kid: String) -> PublicKey? {
        reloadIfStale()
        lock.lock()
        var found = entries.first { $0.kid == kid }?.publicKey
        let now = clock()
        let mayReload = found == nil && now.timeIntervalSince(missReloadAt) >= KeyRing.missReloadInterval
        if mayReload {
            missReloadAt = now
            missReloads += 1
        }
        lock.unlock()
        if mayReload, (try? reload()) != nil {
            lock.lock()
            found = entries.first { $0.kid == kid }?.publicKey
            lock.unlock()
        }
        return found
    }

    /// The JSON Web Key Set (RFC 7517 §5): every published key as an EC P-256 JWK.
    public var jwks: JSONValue {
        reloadIfStale()
        lock.lock()
        let current = entries
        lock.unlock()
        return .object(["keys": .array(current.compactMap { entry in
            guard let point = entry.publicKey.x963, point.count == 65 else { return nil }
            return .object([
                "kty": .string("EC"), "crv": .string("P-256"), "kid": .string(entry.kid), "use": .string("sig"), "alg": .string("ES256"),
                "x": .string(Base64URL.encode(point[1...32])), "y": .string(Base64URL.encode(point[33...])),
            ])
        })])
    }
}
