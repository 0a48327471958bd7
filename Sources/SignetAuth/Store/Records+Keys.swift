/// What the database holds sealed under the key-encryption key (DESIGN.md, "Keys"), read for a
/// re-key and written back by it: each signing key's sealed private key by `kid`, each queued
/// message by its ID, each log stream's sealed `Authorization` value by the stream's ID, and the
/// sealed keys (``SealedKeyRow``), with which code keys the unused recovery codes need.
public struct SealedMaterial: Sendable, Equatable {
    public var signingKeys: [String: [UInt8]]
    public var messages: [String: [UInt8]]
    /// Each log stream's sealed `Authorization` value, by the stream's ID (streams without one
    /// are not here).
    public var logStreamAuthorizations: [String: [UInt8]]
    /// Each log stream's sealed signing secrets, by the stream's ID (streams without any are
    /// not here).
    public var logStreamSigning: [String: [UInt8]]
    public var keys: [SealedKeyRow]
    /// Read: the IDs of the code keys that unused recovery codes were hashed under, with `""`
    /// for codes made before the ID was recorded (schema 14). Written: the IDs the change keeps
    /// a key for, `""` when it keeps every earlier key for such codes. The store refuses a change
    /// that leaves an unused code without its key.
    public var codeKeyIDs: Set<String>
    /// Written: the code key ID that unused codes without one are recorded under, when the
    /// re-key knows it (a database never re-keyed has made every code under one key).
    public var unlabelledCodeKeyID: String?

    public init(signingKeys: [String: [UInt8]], messages: [String: [UInt8]], keys: [SealedKeyRow], codeKeyIDs: Set<String> = [], unlabelledCodeKeyID: String? = nil,
                logStreamAuthorizations: [String: [UInt8]] = [:], logStreamSigning: [String: [UInt8]] = [:]) {
        self.logStreamAuthorizations = logStreamAuthorizations
        self.logStreamSigning = logStreamSigning
        self.signingKeys = signingKeys
        self.messages = messages
        self.keys = keys
        self.codeKeyIDs = codeKeyIDs
        self.unlabelledCodeKeyID = unlabelledCodeKeyID
    }
}

/// How many unused recovery codes, of how many accounts, were made under one code key; `keyID`
/// `nil` for codes from before the key was recorded (schema 14).
public struct CodeKeyUsage: Sendable, Equatable {
    public var keyID: String?
    public var codes: Int
    public var accounts: Int

    public init(keyID: String?, codes: Int, accounts: Int) {
        self.keyID = keyID
        self.codes = codes
        self.accounts = accounts
    }
}

/// A key kept in the database sealed under the key-encryption key: the check that tells which
/// key-encryption key the database is under, and the code keys of earlier ones, which the
/// recovery codes made under them still need.
public struct SealedKeyRow: Sendable, Equatable {
    public var name: String
    public var sealed: [UInt8]
    public var createdAt: Int64

    public init(name: String, sealed: [UInt8], createdAt: Int64) {
        self.name = name
        self.sealed = sealed
        self.createdAt = createdAt
    }
}
