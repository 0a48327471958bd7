public import Foundation
public import SignetCrypto
public import SignetWebAuthn

/// Replacing the key-encryption key (`signet keys rekey`). What the database holds sealed under
/// it is sealed again under the new one: the signing keys, the queued mail, and the log streams'
/// `Authorization` headers and signing secrets (the secrets themselves stay: endpoints keep
/// checking). What is keyed by
/// it and cannot be computed again is kept: the HMACs of recovery codes need the code key they
/// were made under, so the old code key is kept in the database, sealed under the new
/// key-encryption key, and a recovery code is checked under the key it was made under (each kept
/// one, for a code from before schema 14). An earlier code key that no unused code needs any
/// more is dropped, so a leaked key-encryption key stops mattering once its codes are used or
/// replaced. The decoy key is kept too, so
/// that the passkey IDs shown for unknown usernames do not change (a change would tell them from
/// real accounts, whose IDs stay). Pending email codes (minutes long) are discarded. Everything
/// else derived from it (auth sessions, DPoP nonces, CSRF tokens, sealed authorization requests)
/// lives minutes and is only refused, never misread, after.
extension KeyEncryptionKey {
    /// The keys a re-key kept (``keptKeys(store:kek:)``), opened.
    public struct KeptKeys: Sendable {
        /// The code keys of earlier key-encryption keys.
        public var codeKeys: [[UInt8]] = []
        /// The decoy key from before the first re-key; `nil` for a database never re-keyed.
        public var decoyKey: [UInt8]?

        public init() {}
    }

    /// The key of the passkey IDs shown for usernames without an account, under `kek`.
    static func decoyKey(_ kek: [UInt8]) -> [UInt8] { Digest.sha256.hmac(key: kek, data: Array("signet decoy credential key v1".utf8)) }
    /// The key of the HMACs that email and recovery codes are stored as, under `kek`.
    package static func codeKey(_ kek: [UInt8]) -> [UInt8] { Digest.sha256.hmac(key: kek, data: Array("signet one-time code key v1".utf8)) }
    /// The key queued messages are sealed under (AES-256-GCM), under `kek`.
    package static func mailKey(_ kek: [UInt8]) -> [UInt8] { Digest.sha256.hmac(key: kek, data: Array("signet outbox key v1".utf8)) }

    /// The key log streams' `Authorization` values are sealed under (AES-256-GCM), under `kek`.
    package static func logStreamKey(_ kek: [UInt8]) -> [UInt8] { Digest.sha256.hmac(key: kek, data: Array("signet log stream key v1".utf8)) }

    /// A name for `kek` that tells keys apart without revealing them: 9 bytes of an HMAC under it.
    public static func id(_ kek: [UInt8]) -> String {
        Base64URL.encode(Array(Digest.sha256.hmac(key: kek, data: Array("signet key-encryption key id v1".utf8)).prefix(9)))
    }

    /// The sealed key that says which key-encryption key the database is under: its ID, sealed.
    static let checkName = "kek-check"
    /// The code key of an earlier key-encryption key: `code-key:` and that key's ID.
    static let retiredCodeKeyPrefix = "code-key:"
    /// The decoy key, kept from before the first re-key.
    static let decoyName = "decoy-key"

    static func seal(_ plain: [UInt8], name: String, under kek: [UInt8]) throws -> [UInt8] {
        try AESGCM.seal(plain, key: kek, aad: Array("signet sealed key v1\u{0}\(name)".utf8))
    }

    static func open(_ row: SealedKeyRow, under kek: [UInt8]) throws -> [UInt8] {
        try AESGCM.open(row.sealed, key: kek, aad: Array("signet sealed key v1\u{0}\(row.name)".utf8))
    }

    /// The keys earlier re-keys kept, opened with `kek`; none for a database never re-keyed.
    /// Throws when the database was re-keyed to another key: a server started with the old one
    /// would make codes and mail nothing else can read.
    public static func keptKeys(store: any Store, kek: [UInt8]) throws -> KeptKeys {
        let rows = try store.sealedKeys()
        var kept = KeptKeys()
        guard let check = rows.first(where: { $0.name == checkName }) else { return kept }
        guard let opened = try? open(check, under: kek), opened == Array(id(kek).utf8) else {
            throw ConfigurationError("the key-encryption key \(id(kek)) is not this database's: it was re-keyed (signet keys rekey); start with the new key")
        }
        for row in rows where row.name != checkName {
            let key: [UInt8]
            do { key = try open(row, under: kek) } catch { throw ConfigurationError("sealed key \(row.name) does not open under the key-encryption key \(id(kek))") }
            if row.name == decoyName { kept.decoyKey = key } else if row.name.hasPrefix(retiredCodeKeyPrefix) { kept.codeKeys.append(key) }
        }
        return kept
    }

    /// The key-encryption key for `store`, and the keys its re-keys kept (``keptKeys(store:kek:)``). A new key is made (``load(environment:file:random:)``)
    /// only for a database that holds no signing key yet: for one that does, a missing key is an
    /// error that says so, not a new key that opens nothing (and a key file left behind).
    /// Throws as well when the key is not the database's.
    public static func load(for store: any Store, environment: [String: String], file: String,
                            random: RandomBytes = { SecureRandom.bytes($0) }) throws -> (kek: [UInt8], kept: KeptKeys) {
        if environment["SIGNET_KEK"] == nil, !FileManager.default.fileExists(atPath: file), try !store.signingKeys().isEmpty {
            throw ConfigurationError("no key-encryption key at \(file) and no SIGNET_KEK, but the database's signing keys are sealed under one: "
                + "point key_encryption_key_file (or SIGNET_KEK) to it")
        }
        let kek = try load(environment: environment, file: file, random: random)
        return (kek, try keptKeys(store: store, kek: kek))
    }

    /// What a re-key did.
    public struct Rekeyed: Sendable, Equatable {
        public var signingKeys: Int
        public var messages: Int
        /// Log streams whose `Authorization` header or signing secrets were sealed again.
        public var logStreams: Int = 0
        /// The earlier code keys now kept: the old key-encryption key's, and each earlier one
        /// that an unused recovery code still needs.
        public var retiredCodeKeys: Int
        /// The earlier code keys no unused recovery code needed, now gone.
        public var droppedCodeKeys: Int
    }

    /// The code keys to keep sealed under the new key, by ID, and the IDs unused codes may carry
    /// after the re-key (``SealedMaterial/codeKeyIDs``). The old key's code key is always kept:
    /// a server not yet stopped makes codes under it. An earlier one is kept while an unused code
    /// needs it, or while a code without a key ID may. A database never re-keyed has made every
    /// code under the old key, so its codes without an ID get that one (`unlabelled`).
    package static func keptCodeKeys(old: [UInt8], kept: [[UInt8]], inUse read: Set<String>) -> (keys: [String: [UInt8]], ids: Set<String>, unlabelled: String?) {
        let current = codeKey(old)
        let unlabelled = kept.isEmpty ? id(current) : nil
        var inUse = read
        if let unlabelled, inUse.remove("") != nil { inUse.insert(unlabelled) }
        var keys = [id(current): current]
        for key in kept where inUse.contains("") || inUse.contains(id(key)) { keys[id(key)] = key }
        // A code under a key that was never kept cannot be checked now either: left as it is.
        return (keys, inUse.union(keys.keys), unlabelled)
    }

    /// Seals everything in `store` that is under `old` again under `new`, in one transaction
    /// (``Store/rekey(_:from:)``), keeping `old`'s code key for the recovery codes made with it.
    /// Refuses when `old` does not open what the database holds, changing nothing.
    public static func rekey(store: any Store, from old: [UInt8], to new: [UInt8], now: Date = Date()) throws -> Rekeyed {
        guard old != new else { throw ConfigurationError("the new key-encryption key is the current one") }
        let kept = try keptKeys(store: store, kek: old)
        let read = try store.sealedMaterial()
        var change = SealedMaterial(signingKeys: [:], messages: [:], keys: [])
        for (kid, sealed) in read.signingKeys {
            guard let key = try? AESGCM.open(sealed, key: old, aad: Array(kid.utf8)) else {
                throw ConfigurationError("signing key \(kid) does not open under the key-encryption key \(id(old)): it is not this database's")
            }
            change.signingKeys[kid] = try AESGCM.seal(key, key: new, aad: Array(kid.utf8))
        }
        let (oldMail, newMail) = (mailKey(old), mailKey(new))
        for (messageID, sealed) in read.messages {
            // A message that does not open is left as it is: the sender drops it, as before.
            guard let message = try? AESGCM.open(sealed, key: oldMail, aad: Array(messageID.utf8)) else { change.messages[messageID] = sealed; continue }
            change.messages[messageID] = try AESGCM.seal(message, key: newMail, aad: Array(messageID.utf8))
        }
        let (oldStreams, newStreams) = (logStreamKey(old), logStreamKey(new))
        for (streamID, sealed) in read.logStreamAuthorizations {
            guard let header = try? AESGCM.open(sealed, key: oldStreams, aad: Array(streamID.utf8)) else {
                throw ConfigurationError("log stream \(streamID)'s header does not open under the key-encryption key \(id(old)): it is not this database's")
            }
            change.logStreamAuthorizations[streamID] = try AESGCM.seal(header, key: newStreams, aad: Array(streamID.utf8))
        }
        for (streamID, sealed) in read.logStreamSigning {
            let aad = LogStreamSigning.associatedData(streamID: streamID)
            guard let secrets = try? AESGCM.open(sealed, key: oldStreams, aad: aad) else {
                throw ConfigurationError("log stream \(streamID)'s signing secret does not open under the key-encryption key \(id(old)): it is not this database's")
            }
            change.logStreamSigning[streamID] = try AESGCM.seal(secrets, key: newStreams, aad: aad)
        }
        let at = Int64(now.timeIntervalSince1970 * 1000)
        // Named by the key's own ID, so a key that comes back is one row.
        let codeKeys = keptCodeKeys(old: old, kept: kept.codeKeys, inUse: read.codeKeyIDs)
        for (keyID, key) in codeKeys.keys.sorted(by: { $0.key < $1.key }) {
            let name = retiredCodeKeyPrefix + keyID
            change.keys.append(SealedKeyRow(name: name, sealed: try seal(key, name: name, under: new), createdAt: at))
        }
        change.codeKeyIDs = codeKeys.ids
        change.unlabelledCodeKeyID = codeKeys.unlabelled
        change.keys.append(SealedKeyRow(name: decoyName, sealed: try seal(kept.decoyKey ?? decoyKey(old), name: decoyName, under: new), createdAt: at))
        change.keys.append(SealedKeyRow(name: checkName, sealed: try seal(Array(id(new).utf8), name: checkName, under: new), createdAt: at))
        try store.rekey(change, from: read)
        let dropped = Set(kept.codeKeys.map(id)).subtracting(codeKeys.keys.keys)
        return Rekeyed(signingKeys: change.signingKeys.count, messages: change.messages.count, logStreams: Set(change.logStreamAuthorizations.keys).union(change.logStreamSigning.keys).count,
                       retiredCodeKeys: codeKeys.keys.count, droppedCodeKeys: dropped.count)
    }
}
