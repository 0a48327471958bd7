import Foundation
import SignetAuth

/// Sign-ins that reach PostgreSQL while another is committing, committed together: one statement
/// for up to ``maxSignInBatch`` of them (``CommitBatcher``). Under load most of a sign-in's cost
/// in PostgreSQL is per statement, not per row: starting the executor for the plan, the commit
/// and its WAL flush, the answer's send. A batch pays them once.
///
/// The statement is ``signInSQL(proof:_:)``'s with a row per sign-in: the input rows `i`, the session
/// marks `s`, the guarded credential uses `c` (a row of `i` whose mark went in), the writes of
/// each used row, then one row per sign-in with its outcome and account. A batch holds sign-ins of
/// one shape, never two of one auth session or of one passkey (a second waits for the next batch,
/// where it meets the first one's committed row as it would alone), and none with a DPoP proof.
/// If the statement fails as a whole (one sign-in's conflict, a deadlock with another instance),
/// nothing of it was written and each sign-in runs alone, so only the one at fault fails.
extension SQLStore {
    /// A sign-in waiting for a batch: its use and its statement as it would run alone.
    struct BatchedSignIn: Sendable {
        let use: SignInUse
        let statement: SignInStatement
    }

    /// Most sign-ins in one statement: more than the worker threads that can wait at once.
    static let maxSignInBatch = 16

    /// Whether `item` may join `batch`: same writes, no DPoP proof, and neither its auth session
    /// nor its passkey already in the batch.
    static func fits(_ item: BatchedSignIn, _ batch: [BatchedSignIn]) -> Bool {
        guard let first = batch.first else { return true }
        return item.statement.proofs.isEmpty && first.statement.proofs.isEmpty && item.statement.shape == first.statement.shape
            && !batch.contains { $0.use.sessionID == item.use.sessionID || $0.use.credential.credentialID == item.use.credential.credentialID }
    }

    /// Runs a batch that ``fits(_:_:)`` formed: one sign-in alone as its own statement, several as
    /// one; if that one fails as a whole, each alone.
    func runSignInBatch(_ batch: [BatchedSignIn]) -> [Result<SignInOutcome, StoreError>] {
        if batch.count > 1 {
            do {
                return try completeSignIns(batch)
            } catch {
                // The database is gone or full: alone, each would fail the same way.
                if error.code == .unavailable || error.code == .storageFull { return batch.map { _ in .failure(error) } }
            }
        }
        return batch.map { item in
            do throws(StoreError) { return .success(try completePostgresSignIn(item.use, item.statement)) } catch { return .failure(error) }
        }
    }

    /// Several sign-ins of one shape in one statement; one result per sign-in, in order.
    func completeSignIns(_ batch: [BatchedSignIn]) throws(StoreError) -> [Result<SignInOutcome, StoreError>] {
        let shape = SignInShape(proof: false, parts: batch[0].statement.shape, count: batch.count)
        let sql = Self.signInSQL(shape)
        var values: [SQLValue] = []
        for item in batch {
            let u = item.use.credential
            values += [.blob(item.use.sessionID), .int(item.use.sessionExpiresAt), .int(u.signCount), .int(u.backupState ? 1 : 0), .int(u.at),
                       .blob(u.credentialID), .text(u.userID), .blob(u.publicKey)]
        }
        for part in shape.parts.indices {
            for item in batch { values += item.statement.parts[part] }
        }
        return try locked { db throws(StoreError) in
            let rows = try db.query(sql, values)
            guard rows.count == batch.count else { throw StoreError(.internalError, "the batch statement answered \(rows.count) rows for \(batch.count) sign-ins") }
            return zip(batch, rows).map { item, row in
                let account: UserRecord? = if case .null = row[3] { nil } else { Self.user(Array(row[3...])) }
                do throws(StoreError) {
                    return .success(try Self.signInOutcome(marked: row[1].int == 1, used: row[2].int == 1, proofs: 0, account: account, item.use, item.statement, db))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// The text of the statement for `count` sign-ins whose writes are `parts` (no proof).
    static func batchSignInSQL(_ parts: [SignInPart], count: Int) -> String {
        // One row of placeholders per sign-in, numbered from 1, each cast to its column's type.
        func rows(_ casts: [String]) -> String {
            let row = casts.map { $0.hasPrefix("NULL") ? $0 : "?::" + $0 }.joined(separator: ", ")
            return (1...count).map { "(\($0), \(row))" }.joined(separator: ", ")
        }
        var ctes = [
            "i (n, sid, sexp, cnt, bs, ts, cid, uid, pk) AS (VALUES \(rows(["bytea", "bigint", "bigint", "int", "bigint", "bytea", "text", "bytea"])))",
            "s AS (INSERT INTO used_sessions (id, expires_at) SELECT sid, sexp FROM i ON CONFLICT (id) DO NOTHING RETURNING id)",
            """
            c AS (UPDATE credentials k SET sign_count = i.cnt, backup_state = i.bs, last_used_at = i.ts, use_count = k.use_count + 1 FROM i
            WHERE k.id = i.cid AND k.user_id = i.uid AND k.public_key = i.pk AND k.revoked_at IS NULL AND (k.sign_count < i.cnt OR (i.cnt = 0 AND k.sign_count = 0))
            AND i.sid IN (SELECT id FROM s) AND EXISTS (SELECT 1 FROM users a WHERE a.id = i.uid AND a.blocked = 0) RETURNING i.n)
            """,
        ]
        for (n, part) in parts.enumerated() {
            let (table, columns, casts) = part.insertion
            ctes.append("w\(n) AS (INSERT INTO \(table) (\(columns)) SELECT \(columns) FROM (VALUES \(rows(casts))) v (n, \(columns)) WHERE v.n IN (SELECT n FROM c))")
        }
        return "WITH " + ctes.joined(separator: ",\n")
            + "\nSELECT i.n, i.sid IN (SELECT id FROM s), i.n IN (SELECT n FROM c), \(prefixed(userSelect, "u")) FROM i LEFT JOIN users u ON u.id = i.uid ORDER BY i.n"
    }
}
