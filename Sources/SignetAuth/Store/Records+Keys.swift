/// What the database holds sealed under the key-encryption key (DESIGN.md, "Keys"), read for a
/// re-key and written back by it: each signing key's sealed private key by `kid`, each queued
/// message by its ID, and the sealed keys (``SealedKeyRow``).
public struct SealedMaterial: Sendable, Equatable {
    public var signingKeys: [String: [UInt8]]
    public var messages: [String: [UInt8]]
    public var keys: [SealedKeyRow]

    public init(signingKeys: [String: [UInt8]], messages: [String: [UInt8]], keys: [SealedKeyRow]) {
        self.signingKeys = signingKeys
        self.messages = messages
        self.keys = keys
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
