public import SignetAuth

/// The serial numbers of the Metadata Service BLOBs seen (``Store/raiseMetadataNumber(root:number:at:)``),
/// and the owners told of a model the BLOBs refuse (``Store/tellRefusedPasskeys(model:at:batch:writes:)``).
extension SQLStore {
    public func raiseMetadataNumber(root: [UInt8], number: Int64, at: Int64) throws(StoreError) -> Int64 {
        try locked { db throws(StoreError) in
            // One statement: two instances raising at once keep the higher number.
            let rows = try db.query(
                """
                INSERT INTO metadata_numbers (root, number, seen_at) VALUES (?, ?, ?)
                ON CONFLICT (root) DO UPDATE SET
                    seen_at = CASE WHEN excluded.number > metadata_numbers.number THEN excluded.seen_at ELSE metadata_numbers.seen_at END,
                    number = CASE WHEN excluded.number > metadata_numbers.number THEN excluded.number ELSE metadata_numbers.number END
                RETURNING number
                """, [.blob(root), .int(number), .int(at)])
            return rows.first?[0].int ?? number
        }
    }

    public func tellRefusedPasskeys(model: String, at: Int64, batch: Int,
                                    writes: (_ passkeys: [(passkey: CredentialRow, owner: UserRecord)]) -> [StoreWrite]) throws(StoreError) -> Int {
        // Every passkey is read (no index by model), once, on the reading connection.
        let untold = try reading { db throws(StoreError) in
            try db.query(
                """
                SELECT c.id FROM credentials c JOIN users u ON u.id = c.user_id WHERE c.aaguid = ? AND c.revoked_at IS NULL AND u.blocked = 0
                AND NOT EXISTS (SELECT 1 FROM refusal_notices n WHERE n.credential_id = c.id) ORDER BY c.user_id, c.id
                """, [.text(model)]).compactMap { $0[0].blob }
        }
        var marked = 0
        let size = max(batch, 1)
        for start in stride(from: 0, to: untold.count, by: size) {
            marked += try locked { db throws(StoreError) in
                try db.transaction { () throws(StoreError) -> Int in
                    var told: [(passkey: CredentialRow, owner: UserRecord)] = []
                    for id in untold[start..<min(start + size, untold.count)] {
                        // Still in use, and not marked by another instance first: one statement decides.
                        try db.query(
                            """
                            INSERT INTO refusal_notices (credential_id, user_id, told_at) SELECT id, user_id, ? FROM credentials
                            WHERE id = ? AND revoked_at IS NULL ON CONFLICT (credential_id) DO NOTHING
                            """, [.int(at), .blob(id)])
                        guard db.changes == 1, let row = try db.query(Self.credentialAndUserSQL, [.blob(id)]).first else { continue }
                        told.append((Self.credential(Array(row[0..<Self.credentialColumnCount])), Self.user(Array(row[Self.credentialColumnCount...]))))
                    }
                    if !told.isEmpty {
                        for write in writes(told) { try Self.apply(write, db) }
                    }
                    return told.count
                }
            }
        }
        return marked
    }
}
