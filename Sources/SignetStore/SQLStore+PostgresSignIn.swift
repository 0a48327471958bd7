import Foundation
import SignetAuth
import Synchronization

/// A sign-in's commit on PostgreSQL in one statement instead of seven (`BEGIN`, the session
/// mark, the guarded credential use, each write, the account read, `COMMIT`): every step is a
/// data-modifying CTE that runs only when the one before it took effect, so the statement as a
/// whole is the transaction (PostgreSQL 15 §7.8.4: all of a statement's CTEs see one snapshot
/// and commit together).
///
///     p    the DPoP proof mark, if any (ON CONFLICT DO NOTHING: a used one leaves its row out)
///     s    the auth session's mark, only when every proof mark went in
///     c    the guarded credential use, only with the session marked and the account not blocked
///     w0…  the writes, only when the credential was used
///     then the counts and the account, read in the same statement
///
/// A refused use leaves the session and proof marks written; they are deleted at once, so that
/// a refused sign-in writes nothing, as ``Store/completeSignIn(_:writes:)`` promises.
extension SQLStore {
    struct SignInStatement: Sendable {
        var sql: String
        var values: [SQLValue]
        var proofs: [[UInt8]]
        /// The writes it carries besides a proof mark, in order, and each one's values: what a
        /// statement for several sign-ins (``batchSignInSQL(_:count:)``) needs of this one.
        var shape: [SignInPart]
        var parts: [[SQLValue]]
    }

    /// A write a sign-in statement carries besides the proof mark, the session mark and the
    /// credential use.
    enum SignInPart: UInt8, Hashable, Sendable {
        case audit, refreshToken, webSession

        /// The table a write of this kind inserts into, its columns, and each column's type for
        /// the cast of its placeholder (a `NULL…` entry is a column given no value).
        var insertion: (table: String, columns: String, casts: [String]) {
            switch self {
            case .audit: ("audit_events", auditColumns, ["bigint"] + Array(repeating: "text", count: 9))
            case .refreshToken: ("refresh_tokens", refreshTokenColumns, ["bytea", "text", "text", "text", "text", "bigint", "text", "bigint", "bigint", "text", "text", "text", "text"])
            // `revoked_at` is the tenth column, NULL in a new session.
            case .webSession: ("web_sessions", webSessionColumns, ["bytea", "text", "text", "bigint", "text", "text", "bigint", "bigint", "bigint", "NULL::bigint", "text", "text"])
            }
        }
    }

    /// What a sign-in statement's text depends on, and nothing else: whether it marks a DPoP
    /// proof, the writes it carries in order, and how many sign-ins it commits (one, or a batch
    /// of that many, ``batchSignInSQL(_:count:)``; a batch never holds a proof).
    struct SignInShape: Hashable {
        var proof: Bool
        var parts: [SignInPart]
        var count: Int
    }

    /// Statement texts by shape. The shapes are the few the ceremonies make, times the batch
    /// sizes, so this stays small. Made per call, the text cost about 200k instructions a sign-in
    /// (callgrind), 9% of Signet's CPU on PostgreSQL.
    static let signInStatements = Mutex<[SignInShape: String]>([:])

    /// The text of the statement of `shape`, made on its first use.
    static func signInSQL(_ shape: SignInShape) -> String {
        signInStatements.withLock { cache in
            if let known = cache[shape] { return known }
            let made = shape.count == 1 ? signInSQL(proof: shape.proof, shape.parts) : batchSignInSQL(shape.parts, count: shape.count)
            cache[shape] = made
            return made
        }
    }

    /// The statement for `use` and `writes`, or `nil` when a write is of a kind it does not
    /// carry (the transaction of seven statements then runs instead).
    static func postgresSignIn(_ use: SignInUse, writes: [StoreWrite]) -> SignInStatement? {
        var shape: [SignInPart] = []
        var proofValues: [SQLValue] = []
        var parts: [[SQLValue]] = []
        var proofs: [[UInt8]] = []
        for write in writes {
            switch write {
            case .useProof(let id, let expiresAt):
                // One proof a request; with more, which marks this statement made could not be told.
                guard proofs.isEmpty else { return nil }
                proofValues += [.blob(id), .int(expiresAt)]
                proofs.append(id)
            case .audit(let e):
                shape.append(.audit)
                parts.append(auditValues(e))
            case .refreshToken(let t):
                shape.append(.refreshToken)
                parts.append(refreshTokenValues(t))
            case .webSession(let w):
                shape.append(.webSession)
                parts.append(webSessionValues(w))
            default:
                return nil
            }
        }
        let sql = signInSQL(SignInShape(proof: !proofs.isEmpty, parts: shape, count: 1))
        // The values in the order of the text's placeholders: the proof mark, the session mark,
        // the credential use, the writes, the account.
        let u = use.credential
        var values = proofValues
        values.reserveCapacity(proofValues.count + 12 + parts.reduce(0) { $0 + $1.count })
        values += [.blob(use.sessionID), .int(use.sessionExpiresAt)]
        values += [.int(u.signCount), .int(u.backupState ? 1 : 0), .int(u.at), .blob(u.credentialID), .text(u.userID), .blob(u.publicKey),
                   .int(u.signCount), .int(u.signCount), .text(u.userID)]
        for part in parts { values += part }
        values.append(.text(u.userID))
        return SignInStatement(sql: sql, values: values, proofs: proofs, shape: shape, parts: parts)
    }

    /// The text of one sign-in's statement, with the proof mark first if `proof`.
    static func signInSQL(proof: Bool, _ parts: [SignInPart]) -> String {
        // At most one proof (``postgresSignIn(_:writes:)`` refuses more), as the CTE `p`.
        var ctes: [String] = []
        if proof { ctes.append("p AS (INSERT INTO used_sessions (id, expires_at) VALUES (?::bytea, ?::bigint) ON CONFLICT (id) DO NOTHING RETURNING 1)") }
        ctes.append("s AS (INSERT INTO used_sessions (id, expires_at) SELECT ?::bytea, ?::bigint WHERE TRUE\(proof ? " AND EXISTS (SELECT 1 FROM p)" : "") ON CONFLICT (id) DO NOTHING RETURNING 1)")
        ctes.append("""
            c AS (UPDATE credentials SET sign_count = ?::bigint, backup_state = ?::int, last_used_at = ?::bigint, use_count = use_count + 1
            WHERE id = ?::bytea AND user_id = ?::text AND public_key = ?::bytea AND revoked_at IS NULL AND (sign_count < ?::bigint OR (?::bigint = 0 AND sign_count = 0))
            AND EXISTS (SELECT 1 FROM s) AND EXISTS (SELECT 1 FROM users WHERE id = ?::text AND blocked = 0) RETURNING 1)
            """)
        for (n, part) in parts.enumerated() {
            let (table, columns, casts) = part.insertion
            ctes.append(insert(n, table, columns, casts: casts))
        }
        return "WITH " + ctes.joined(separator: ",\n") + "\nSELECT (SELECT count(*) FROM s), (SELECT count(*) FROM c), \(proof ? "(SELECT count(*) FROM p)" : "0"), \(prefixed(userSelect, "u")) "
            + "FROM (SELECT 1) one LEFT JOIN users u ON u.id = ?::text"
    }

    /// The CTE `w<n>` that inserts one row into `table` when the credential was used: each
    /// placeholder cast to its column's type (PostgreSQL cannot infer the types of an
    /// `INSERT … SELECT`'s parameters), `NULL` for a column given no value.
    static func insert(_ n: Int, _ table: String, _ columns: String, casts: [String]) -> String {
        let selected = casts.map { $0.hasPrefix("NULL") ? $0 : "?::" + $0 }.joined(separator: ", ")
        return "w\(n) AS (INSERT INTO \(table) (\(columns)) SELECT \(selected) WHERE EXISTS (SELECT 1 FROM c))"
    }

    /// Runs ``postgresSignIn(_:writes:)``'s statement alone and reads its outcome.
    func completePostgresSignIn(_ use: SignInUse, _ statement: SignInStatement) throws(StoreError) -> SignInOutcome {
        try locked { db throws(StoreError) in
            guard let row = try db.query(statement.sql, statement.values).first else { throw StoreError(.internalError, "the sign-in statement answered no row") }
            let account: UserRecord? = if case .null = row[3] { nil } else { Self.user(Array(row[3...])) }
            return try Self.signInOutcome(marked: row[0].int == 1, used: row[1].int == 1, proofs: Int(row[2].int ?? 0), account: account, use, statement, db)
        }
    }

    /// What a sign-in statement's row says: signed in, or refused (and then the marks it made are
    /// deleted, as a rolled-back transaction's would be) or an error for a used session or proof.
    static func signInOutcome(marked: Bool, used: Bool, proofs: Int, account: UserRecord?, _ use: SignInUse, _ statement: SignInStatement,
                              _ db: any SQLSession) throws(StoreError) -> SignInOutcome {
        if used {
            guard let account else { throw StoreError(.internalError, "a credential was used for an account that is gone") }
            return .signedIn(account)
        }
        // Nothing of the sign-in was written but the marks this statement made; they go, as
        // a rolled-back transaction's would. (A proof that was already used made no mark.)
        if marked { try db.query("DELETE FROM used_sessions WHERE id = ?", [.blob(use.sessionID)]) }
        if proofs > 0, let id = statement.proofs.first { try db.query("DELETE FROM used_sessions WHERE id = ?", [.blob(id)]) }
        guard proofs == statement.proofs.count else { throw StoreError(.proofUsed, "the DPoP proof was already used") }
        guard marked else { throw StoreError(.sessionUsed, "the auth session was already used") }
        guard let account else { return .refused(.credentialUnknown) }
        if account.blocked { return .refused(.userBlocked) }
        let credential = try db.query("SELECT user_id, public_key, revoked_at, sign_count FROM credentials WHERE id = ?", [.blob(use.credential.credentialID)]).first
        guard let credential, credential[0].text == use.credential.userID, credential[1].blob == use.credential.publicKey else { return .refused(.credentialUnknown) }
        return .refused(credential[2].int != nil ? .credentialRevoked : .counterRegression(stored: credential[3].int ?? 0))
    }
}
