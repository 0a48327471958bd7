public import SignetAuth

/// The serial numbers of the Metadata Service BLOBs seen (``Store/raiseMetadataNumber(root:number:at:)``),
/// and the owners told of a model the BLOBs refuse (``Store/tellRefusedPasskeys(model:at:limit:writes:)``).
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

    public func tellRefusedPasskeys(model: String, at: Int64, limit: Int,
                                    writes: (_ passkeys: [(passkey: CredentialRow, owner: UserRecord)]) -> [StoreWrite]) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int in
                // Every passkey is read (no index by model), as for the count of them.
                let rows = try db.query(
                    """
                    SELECT \(Self.prefixed(Self.credentialColumns, "c")), \(Self.prefixed(Self.userSelect, "u")) FROM credentials c JOIN users u ON u.id = c.user_id
                    WHERE c.aaguid = ? AND c.revoked_at IS NULL AND NOT EXISTS (SELECT 1 FROM refusal_notices n WHERE n.credential_id = c.id)
                    ORDER BY c.user_id, c.id LIMIT ?
                    """, [.text(model), .int(Int64(limit))])
                var marked: [(passkey: CredentialRow, owner: UserRecord)] = []
                for row in rows {
                    let passkey = Self.credential(Array(row[0..<Self.credentialColumnCount]))
                    // Another instance telling the same model at once marks each passkey first or not at all.
                    try db.query("INSERT INTO refusal_notices (credential_id, user_id, told_at) VALUES (?, ?, ?) ON CONFLICT (credential_id) DO NOTHING",
                                 [.blob(passkey.id), .text(passkey.userID), .int(at)])
                    if db.changes == 1 { marked.append((passkey, Self.user(Array(row[Self.credentialColumnCount...])))) }
                }
                if !marked.isEmpty {
                    for write in writes(marked) { try Self.apply(write, db) }
                }
                return rows.count
            }
        }
    }
}
