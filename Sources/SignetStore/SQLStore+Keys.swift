public import SignetAuth

/// What is sealed under the key-encryption key, and its replacement (``Store/rekey(_:from:)``).
extension SQLStore {
    public func sealedKeys() throws(StoreError) -> [SealedKeyRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT name, sealed, created_at FROM sealed_keys ORDER BY name").map {
                SealedKeyRow(name: $0[0].text ?? "", sealed: $0[1].blob ?? [], createdAt: $0[2].int ?? 0)
            }
        }
    }

    public func codeKeyUsage() throws(StoreError) -> [CodeKeyUsage] {
        try locked { db throws(StoreError) in
            try db.query("SELECT key_id, COUNT(*), COUNT(DISTINCT user_id) FROM recovery_codes WHERE used_at IS NULL GROUP BY key_id ORDER BY key_id").map {
                CodeKeyUsage(keyID: $0[0].text, codes: Int($0[1].int ?? 0), accounts: Int($0[2].int ?? 0))
            }
        }
    }

    public func sealedMaterial() throws(StoreError) -> SealedMaterial {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> SealedMaterial in
                var signingKeys: [String: [UInt8]] = [:]
                for row in try db.query("SELECT kid, private_key FROM signing_keys") { signingKeys[row[0].text ?? ""] = row[1].blob ?? [] }
                var messages: [String: [UInt8]] = [:]
                for row in try db.query("SELECT id, message FROM outbox") { messages[row[0].text ?? ""] = row[1].blob ?? [] }
                let keys = try db.query("SELECT name, sealed, created_at FROM sealed_keys ORDER BY name").map {
                    SealedKeyRow(name: $0[0].text ?? "", sealed: $0[1].blob ?? [], createdAt: $0[2].int ?? 0)
                }
                var streams: [String: [UInt8]] = [:]
                for row in try db.query("SELECT id, authorization_sealed FROM log_streams WHERE authorization_sealed IS NOT NULL") { streams[row[0].text ?? ""] = row[1].blob ?? [] }
                var signing: [String: [UInt8]] = [:]
                for row in try db.query("SELECT id, signing_sealed FROM log_streams WHERE signing_sealed IS NOT NULL") { signing[row[0].text ?? ""] = row[1].blob ?? [] }
                return SealedMaterial(signingKeys: signingKeys, messages: messages, keys: keys, codeKeyIDs: try Self.codeKeyIDs(db), logStreamAuthorizations: streams,
                                      logStreamSigning: signing)
            }
        }
    }

    /// The code key IDs of unused recovery codes, `""` for those without one.
    static func codeKeyIDs(_ db: any SQLSession) throws(StoreError) -> Set<String> {
        Set(try db.query("SELECT DISTINCT COALESCE(key_id, '') FROM recovery_codes WHERE used_at IS NULL").map { $0[0].text ?? "" })
    }

    public func rekey(_ change: SealedMaterial, from read: SealedMaterial) throws(StoreError) {
        let moved = StoreError(.conflict, "a signing key, a message, or a log stream's header or signing secret was written under the old key-encryption key during the re-key: stop every server first")
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                for (kid, sealed) in change.signingKeys {
                    guard let before = read.signingKeys[kid] else { throw moved }
                    try db.query("UPDATE signing_keys SET private_key = ? WHERE kid = ? AND private_key = ?", [.blob(sealed), .text(kid), .blob(before)])
                    guard db.changes == 1 else { throw moved }
                }
                guard try db.query("SELECT COUNT(*) FROM signing_keys").first?[0].int == Int64(change.signingKeys.count) else { throw moved }
                var kept = 0
                for (id, sealed) in change.messages {
                    guard let before = read.messages[id] else { throw moved }
                    try db.query("UPDATE outbox SET message = ? WHERE id = ? AND message = ?", [.blob(sealed), .text(id), .blob(before)])
                    kept += db.changes
                }
                // Every message left is one rewritten above; one queued since would be unreadable.
                guard try db.query("SELECT COUNT(*) FROM outbox").first?[0].int == Int64(kept) else { throw moved }
                for (id, sealed) in change.logStreamAuthorizations {
                    guard let before = read.logStreamAuthorizations[id] else { throw moved }
                    try db.query("UPDATE log_streams SET authorization_sealed = ? WHERE id = ? AND authorization_sealed = ?", [.blob(sealed), .text(id), .blob(before)])
                    guard db.changes == 1 else { throw moved }
                }
                // A stream given a header since the read would keep one sealed under the old key.
                guard try db.query("SELECT COUNT(*) FROM log_streams WHERE authorization_sealed IS NOT NULL").first?[0].int == Int64(change.logStreamAuthorizations.count) else { throw moved }
                for (id, sealed) in change.logStreamSigning {
                    guard let before = read.logStreamSigning[id] else { throw moved }
                    try db.query("UPDATE log_streams SET signing_sealed = ? WHERE id = ? AND signing_sealed = ?", [.blob(sealed), .text(id), .blob(before)])
                    guard db.changes == 1 else { throw moved }
                }
                guard try db.query("SELECT COUNT(*) FROM log_streams WHERE signing_sealed IS NOT NULL").first?[0].int == Int64(change.logStreamSigning.count) else { throw moved }
                if let id = change.unlabelledCodeKeyID {
                    try db.query("UPDATE recovery_codes SET key_id = ? WHERE key_id IS NULL", [.text(id)])
                }
                guard try Self.codeKeyIDs(db).isSubset(of: change.codeKeyIDs) else {
                    throw StoreError(.conflict, "an unused recovery code was made under a code key the re-key does not keep: stop every server first")
                }
                try db.query("DELETE FROM email_codes")
                try db.query("DELETE FROM sealed_keys")
                for key in change.keys {
                    try db.query("INSERT INTO sealed_keys (name, sealed, created_at) VALUES (?, ?, ?)", [.text(key.name), .blob(key.sealed), .int(key.createdAt)])
                }
            }
        }
    }
}
