public import SignetAuth

/// The serial numbers of the Metadata Service BLOBs seen (``Store/raiseMetadataNumber(root:number:at:)``).
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
}
