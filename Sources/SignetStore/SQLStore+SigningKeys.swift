public import SignetAuth

/// Token signing keys: rotation, retirement and revocation.
extension SQLStore {
    public func insertSigningKey(_ k: SigningKeyRow) throws(StoreError) {
        try locked { db throws(StoreError) in try Self.insertSigningKey(k, db) }
    }

    public func rotateSigningKey(_ k: SigningKeyRow, unlessCreatedAfter: Int64, limit: Int, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // Revocations and the other rotations take the same lock: the count holds until the commit.
                try db.lockForTransaction("signing-keys")
                guard try db.query("SELECT 1 FROM signing_keys WHERE created_at > ? LIMIT 1", [.int(unlessCreatedAfter)]).isEmpty else { return false }
                let held = try db.query("SELECT COUNT(*) FROM signing_keys").first?[0].int ?? 0
                guard held < Int64(limit) else { throw StoreError(.signingKeyLimit, "\(held) signing keys held") }
                try Self.insertSigningKey(k, db)
                try Self.retireSigningKeys(except: k.kid, at: k.createdAt, db)
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    static func insertSigningKey(_ k: SigningKeyRow, _ db: any SQLSession) throws(StoreError) {
        try db.query(
            "INSERT INTO signing_keys (kid, algorithm, private_key, public_key, created_at, retired_at) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(k.kid), .text(k.algorithm), .blob(k.encryptedPrivateKey), .blob(k.publicKey), .int(k.createdAt), k.retiredAt.map(SQLValue.int) ?? .null])
    }

    static func retireSigningKeys(except kid: String, at: Int64, _ db: any SQLSession) throws(StoreError) {
        try db.query("UPDATE signing_keys SET retired_at = ? WHERE kid <> ? AND retired_at IS NULL", [.int(at), .text(kid)])
    }

    public func signingKeys() throws(StoreError) -> [SigningKeyRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT kid, algorithm, private_key, public_key, created_at, retired_at FROM signing_keys ORDER BY created_at, kid").map { r in
                SigningKeyRow(kid: r[0].text ?? "", algorithm: r[1].text ?? "", encryptedPrivateKey: r[2].blob ?? [], publicKey: r[3].blob ?? [],
                              createdAt: r[4].int ?? 0, retiredAt: r[5].int)
            }
        }
    }

    public func deleteSigningKeys(retiredBefore cut: Int64, writes: (_ kids: [String]) -> [StoreWrite]) throws(StoreError) -> [String] {
        // One statement: RETURNING names only the rows this statement deleted (SQLite ≥ 3.35;
        // on PostgreSQL a concurrent delete of the same row returns it to one of the two).
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [String] in
                let kids = try db.query("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < ? RETURNING kid", [.int(cut)])
                    .compactMap { $0[0].text }.sorted()
                if !kids.isEmpty { for write in writes(kids) { try Self.apply(write, db) } }
                return kids
            }
        }
    }

    public func revokeSigningKey(kid: String, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // Rotations take the same lock: the key that signs after this one is there.
                try db.lockForTransaction("signing-keys")
                guard try !db.query("SELECT 1 FROM signing_keys WHERE kid = ?", [.text(kid)]).isEmpty else { return false }
                guard try !db.query("SELECT 1 FROM signing_keys WHERE kid <> ? AND retired_at IS NULL LIMIT 1", [.text(kid)]).isEmpty else {
                    throw StoreError(.conflict, "no other key that was never retired would sign")
                }
                try db.query("DELETE FROM signing_keys WHERE kid = ?", [.text(kid)])
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }
}
