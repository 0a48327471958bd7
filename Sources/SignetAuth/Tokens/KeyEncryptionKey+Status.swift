/// What the database's recovery codes need of the key-encryption key's past (`signet keys
/// status`): after a re-key that followed a leak, the leaked key's code key matters until no
/// unused code is under it; this says how many are, and of how many accounts.
extension KeyEncryptionKey {
    /// Unused recovery codes, and the accounts they belong to.
    public struct CodeCount: Sendable, Equatable {
        public var codes = 0
        public var accounts = 0

        public init(codes: Int = 0, accounts: Int = 0) {
            self.codes = codes
            self.accounts = accounts
        }
    }

    /// A code key recovery codes are checked under, and the unused codes made under it.
    public struct CodeKeyStatus: Sendable, Equatable {
        public var id: String
        /// The key-encryption key in use's own: new codes are made under it.
        public var current: Bool
        public var unused: CodeCount

        public init(id: String, current: Bool, unused: CodeCount) {
            self.id = id
            self.current = current
            self.unused = unused
        }
    }

    /// The key-encryption key in use (its ``id(_:)``) and every code key the database holds.
    public struct Status: Sendable, Equatable {
        public var id: String
        /// The current code key first, then the earlier ones by ID.
        public var codeKeys: [CodeKeyStatus]
        /// Unused codes from before schema 14, whose key was not recorded: checked under each.
        public var unlabelled: CodeCount
        /// Unused codes under a key the database does not hold: no code typed can match them.
        public var lost: CodeCount
    }

    /// ``Status`` of `store` under `kek`, with the keys its re-keys `kept`
    /// (``keptKeys(store:kek:)``).
    public static func status(store: any Store, kek: [UInt8], kept: KeptKeys) throws -> Status {
        let usage = try store.codeKeyUsage()
        let current = id(codeKey(kek))
        let earlier = Set(kept.codeKeys.map(id)).subtracting([current]).sorted()
        let held = Set(earlier + [current])
        let codeKeys = ([current] + earlier).map { keyID in
            let use = usage.first { $0.keyID == keyID }
            return CodeKeyStatus(id: keyID, current: keyID == current, unused: CodeCount(codes: use?.codes ?? 0, accounts: use?.accounts ?? 0))
        }
        // An account's codes are one set, made under one key, so accounts add up across keys.
        func count(_ rows: [CodeKeyUsage]) -> CodeCount {
            CodeCount(codes: rows.reduce(0) { $0 + $1.codes }, accounts: rows.reduce(0) { $0 + $1.accounts })
        }
        return Status(id: id(kek), codeKeys: codeKeys, unlabelled: count(usage.filter { $0.keyID == nil }),
                      lost: count(usage.filter { $0.keyID.map { !held.contains($0) } ?? false }))
    }
}
