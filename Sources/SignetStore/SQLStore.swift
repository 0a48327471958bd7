public import SignetAuth
import Foundation
import SignetWebAuthn

/// The store on SQL: one implementation of ``Store`` for both databases. The embedded one is a
/// SQLite file in WAL mode on one connection (SQLite serializes writers anyway); the shared one is
/// PostgreSQL through a pool of libpq connections, for any number of stateless instances.
public final class SQLStore: Store, @unchecked Sendable {
    private let pool: any SessionPool
    /// `sqlite` or `postgres`.
    public let backend: String
    /// PostgreSQL: sign-ins that arrive while one commits share the next statement.
    let signInBatcher = CommitBatcher<BatchedSignIn, SignInOutcome>(maxBatch: SQLStore.maxSignInBatch, compatible: SQLStore.fits)

    /// Opens (creating if needed) the SQLite database at `path` and applies pending migrations.
    /// With `durable` (the default) every write is synced to disk before the call that made it
    /// returns (group commit: concurrent writes share one sync, ``GroupSync``), so what was
    /// answered survives a power cut; without it the last commits before a power cut may be lost
    /// (a process crash loses nothing either way).
    public convenience init(path: String, durable: Bool = true) throws(StoreError) {
        try self.init(path: path, durable: durable, checkpointInterval: 0.25)
    }

    /// With the background checkpoint every `checkpointInterval` seconds (tests set it long).
    package convenience init(path: String, durable: Bool, checkpointInterval: Double) throws(StoreError) {
        try self.init(pool: try SQLitePool(path: path, interval: checkpointInterval, durable: durable), backend: "sqlite", schema: Self.sqliteSchema)
    }

    /// SQLite's migrations, in order.
    static var sqliteSchema: [(version: Int, sql: String)] {
        Schema.migrations(blob: "BLOB", clustered: " WITHOUT ROWID", serial: "INTEGER PRIMARY KEY AUTOINCREMENT", sqlite: true)
    }

    /// The newest schema version this build knows (the same number on both databases): a
    /// database at a later one was upgraded by a newer Signet, and is refused.
    public static var knownSchemaVersion: Int { sqliteSchema.last?.version ?? 0 }

    /// Connects to PostgreSQL at `url` (`postgres://user@host:port/db?sslmode=...`, passed to libpq
    /// as is) with `connections` pooled connections and applies pending migrations; instances
    /// starting at once take turns through an advisory lock.
    public convenience init(postgres url: String, connections: Int) throws(StoreError) {
        try self.init(pool: try PostgresPool(url: url, size: connections), backend: "postgres",
                      schema: Schema.migrations(blob: "BYTEA", serial: "BIGSERIAL PRIMARY KEY"))
    }

    /// Caps the SQLite database at `pages` pages (`PRAGMA max_page_count`): past it a write fails
    /// as on a full disk (for tests of `storage_full`; 0 lifts the cap).
    package func limitPages(_ pages: Int) throws(StoreError) {
        try locked { db throws(StoreError) in _ = try db.query("PRAGMA max_page_count = \(pages == 0 ? 4_294_967_294 : pages)") }
    }

    /// The SQLite database's own check (`PRAGMA integrity_check`): `ok` when whole.
    package func integrityCheck() throws(StoreError) -> String {
        try locked { db throws(StoreError) in try db.query("PRAGMA integrity_check").first?[0].text ?? "" }
    }

    /// Pages in the SQLite database.
    package func pageCount() throws(StoreError) -> Int {
        try locked { db throws(StoreError) in Int(try db.query("PRAGMA page_count").first?[0].int ?? 0) }
    }

    /// Makes every durable sync take at least `seconds` (for tests of group commit).
    package func slowSyncs(_ seconds: Double) { (pool as? SQLitePool)?.groupSync?.minimumSyncTime = seconds }

    /// Whether writes wait for a sync of their own database (durable SQLite), so that a server
    /// can hold answers instead of threads through ``DeferredDurability``.
    package var defersDurability: Bool { (pool as? SQLitePool)?.groupSync != nil }

    /// Calls `done` once commit `number` (from ``DeferredDurability/run(_:)``) is on disk (nil)
    /// or cannot be (why: a failed sync, or a batch that could not commit, such as on a full
    /// disk); at once where writes have no sync to wait for.
    package func whenDurable(_ number: Int, _ done: @escaping @Sendable (StoreError?) -> Void) {
        guard let sync = (pool as? SQLitePool)?.groupSync else { return done(nil) }
        sync.whenDurable(number, done)
    }

    /// Makes every durable sync fail (EIO) until called with false (for tests).
    package func failSyncs(_ failing: Bool) { (pool as? SQLitePool)?.groupSync?.failingSyncs = failing }

    /// Syncs made for durable commits (SQLite; 0 elsewhere).
    package var durableSyncs: Int { (pool as? SQLitePool)?.groupSync?.syncs ?? 0 }
    /// Durable SQLite: the commits that waited for a sync (``durableSyncs`` of them shared each).
    package var durableCommits: Int { (pool as? SQLitePool)?.groupSync?.commits ?? 0 }
    /// Durable SQLite: transactions that held answers' writes, those writes, and the most one held.
    package var writeBatches: (batches: Int, writes: Int, largest: Int) {
        (pool as? SQLitePool)?.batchCounts ?? (0, 0, 0)
    }

    /// Makes the COMMIT of every batch of held writes fail as on a full disk (for tests).
    package func failBatchCommits(_ failing: Bool) { (pool as? SQLitePool)?.failingCommits = failing }
    /// SQLite: the histograms of the WAL's syncs and of the checkpoint's time under the lock, as
    /// Prometheus text (empty elsewhere).
    package var sqliteTimings: String {
        guard let pool = pool as? SQLitePool else { return "" }
        return (pool.groupSync?.syncTimes.text(name: "signet_sqlite_wal_sync_seconds", help: "Duration of each fdatasync of the WAL for durable commits.") ?? "")
            + pool.lockedCheckpointTimes.text(name: "signet_sqlite_locked_checkpoint_seconds", help: "Time the checkpoint's last part held the store's lock.")
    }

    /// PostgreSQL: the sign-in statements run and the sign-ins they carried, as Prometheus text
    /// (their ratio is the mean batch; empty elsewhere or before the first sign-in).
    package var postgresBatching: String {
        guard pool is PostgresPool, signInBatcher.batches > 0 else { return "" }
        return "# HELP signet_postgres_sign_in_batches_total Batches of passkey sign-ins run as one statement (a sign-in alone is a batch of one).\n"
            + "# TYPE signet_postgres_sign_in_batches_total counter\nsignet_postgres_sign_in_batches_total \(signInBatcher.batches)\n"
            + "# HELP signet_postgres_batched_sign_ins_total Sign-ins those batches carried.\n"
            + "# TYPE signet_postgres_batched_sign_ins_total counter\nsignet_postgres_batched_sign_ins_total \(signInBatcher.items)\n"
            + "# HELP signet_postgres_largest_sign_in_batch Most sign-ins one batch carried.\n"
            + "# TYPE signet_postgres_largest_sign_in_batch gauge\nsignet_postgres_largest_sign_in_batch \(signInBatcher.largest)\n"
    }

    /// PostgreSQL: makes each sign-in batch's leader wait `seconds` before taking its batch, so
    /// that sign-ins started together share it (for tests).
    package func holdSignInBatches(_ seconds: Double) { signInBatcher.holdBeforeBatch = seconds }
    /// PostgreSQL: sign-in batches run, the sign-ins they carried and the largest (0 elsewhere).
    package var signInBatches: (batches: Int, items: Int, largest: Int) { (signInBatcher.batches, signInBatcher.items, signInBatcher.largest) }

    init(pool: any SessionPool, backend: String, schema: [(version: Int, sql: String)]) throws(StoreError) {
        self.pool = pool
        self.backend = backend
        try migrate(schema)
    }

    @discardableResult
    func locked<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        try pool.withSession(body)
    }

    /// A read that may scan, on a session that holds up no writer (``SessionPool/reading(_:)``).
    func reading<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        try pool.reading(body)
    }

    /// The schema versions applied, in order.
    public func schemaVersions() throws(StoreError) -> [Int] {
        try locked { db throws(StoreError) in try db.query("SELECT version FROM schema_migrations ORDER BY version").compactMap { $0[0].int.map(Int.init) } }
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    // MARK: users and credentials

    static let userColumns = "id, handle, email, name, email_verified, created_at, locale"
    /// What a read of an account selects: the inserted columns and whether it is blocked.
    static let userSelect = userColumns + ", blocked, sessions_revoked_at"

    static func user(_ r: [SQLValue]) -> UserRecord {
        UserRecord(id: r[0].text ?? "", handle: r[1].blob ?? [], email: r[2].text ?? "", name: r[3].text, emailVerified: r[4].bool, createdAt: r[5].int ?? 0, locale: r[6].text,
                   blocked: r.count > 7 && r[7].bool, sessionsRevokedAt: r.count > 8 ? r[8].int : nil)
    }

    static let credentialColumns = "id, user_id, public_key, algorithm, sign_count, aaguid, format, backup_eligible, backup_state, transports, name, created_at, last_used_at, revoked_at, recovery_id, attested, attestation_root"

    static func credential(_ r: [SQLValue]) -> CredentialRow {
        CredentialRow(
            id: r[0].blob ?? [], userID: r[1].text ?? "", publicKey: r[2].blob ?? [], algorithm: Int(r[3].int ?? 0), signCount: r[4].int ?? 0,
            aaguid: r[5].text ?? "", format: r[6].text ?? "", backupEligible: r[7].bool, backupState: r[8].bool,
            transports: (r[9].text ?? "").split(separator: ",").map(String.init), name: r[10].text, createdAt: r[11].int ?? 0,
            lastUsedAt: r[12].int, revokedAt: r[13].int, recoveryID: r[14].text, attested: r[15].bool, attestationRoot: r[16].blob)
    }

    public func perform(_ writes: [StoreWrite]) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                for write in writes { try Self.apply(write, db) }
            }
        }
    }

    static func apply(_ write: StoreWrite, _ db: any SQLSession) throws(StoreError) {
        switch write {
        case .useSession(let id, let expiresAt):
            try db.query("INSERT INTO used_sessions (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [.blob(id), .int(expiresAt)])
            guard db.changes == 1 else { throw StoreError(.sessionUsed, "the auth session was already used") }
        case .createUser(let user, let c):
            try db.query(
                "INSERT INTO users (\(userColumns)) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING",
                [.text(user.id), .blob(user.handle), .text(user.email), user.name.map(SQLValue.text) ?? .null, .int(user.emailVerified ? 1 : 0), .int(user.createdAt),
                 user.locale.map(SQLValue.text) ?? .null])
            guard db.changes == 1 else { throw StoreError(.emailTaken, "an account with this email exists") }
            try insert(c, db, uses: 1)
        case .addCredential(let c, let limit):
            if let limit {
                try db.lockForTransaction("user:" + c.userID)
                let live = try db.query("SELECT COUNT(*) FROM credentials WHERE user_id = ? AND revoked_at IS NULL", [.text(c.userID)]).first?[0].int ?? 0
                guard live < Int64(limit) else { throw StoreError(.passkeyLimit, "\(live) live passkeys") }
            }
            try insert(c, db)
        case .importDeviceKey(let k):
            try db.query("INSERT INTO device_keys (\(deviceKeyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                         [.text(k.id), .text(k.userID), .text(k.deviceID), .text(k.platform), text(k.name), .blob(k.publicKey), .int(k.createdAt),
                          k.lastUsedAt.map(SQLValue.int) ?? .null, k.revokedAt.map(SQLValue.int) ?? .null, text(k.recoveryID), text(k.approvedBy)])
            guard db.changes == 1 else { throw StoreError(.conflict, "a device key with this ID exists") }
        case .giveRole(let user, let role, let expiresAt, let at):
            try db.query(giveRole, [.text(user), .text(role), .int(at), expiresAt.map(SQLValue.int) ?? .null])
        case .refreshToken(let token):
            try insert(token, db)
        case .createAccount, .verifyEmail, .useEmailCode, .discardEmailCodes, .useRecoveryCode, .openRecovery, .mail, .recordLogin, .userMetadata, .useDeviceCode, .useProof, .webSession,
             .authorizationCode, .useAuthorizationCode, .logoutSubscription:
            try applyManagement(write, db)
        case .audit(let e):
            try db.query("INSERT INTO audit_events (\(auditColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", auditValues(e))
        }
    }

    // The columns and values of the rows a sign-in inserts, in one order for every statement
    // that writes them (here, and the PostgreSQL sign-in's single statement).
    static let auditColumns = "at, kind, outcome, reason, user_id, client_id, credential_id, remote, request_id, detail"
    static func auditValues(_ e: AuditEvent) -> [SQLValue] {
        [.int(e.at), .text(e.kind), .text(e.outcome), text(e.reason), text(e.userID), text(e.clientID), text(e.credentialID), text(e.remote), text(e.requestID),
         text(e.detail)]
    }
    static let refreshTokenColumns = "hash, family, user_id, client_id, scope, auth_time, amr, expires_at, created_at, credential_id, jkt, remote, user_agent"
    static func refreshTokenValues(_ t: RefreshTokenRow) -> [SQLValue] {
        [.blob(t.hash), .text(t.family), .text(t.userID), .text(t.clientID), .text(t.scope), .int(t.authTime), .text(t.amr.joined(separator: " ")),
         .int(t.expiresAt), .int(t.createdAt), text(t.credential), text(t.jkt), text(t.origin.remote), text(t.origin.userAgent)]
    }

    public func createUser(_ user: UserRecord, credential c: CredentialRow) throws(StoreError) {
        try perform([.createUser(user, c)])
    }

    /// - Parameter uses: 1 for a sign-up's passkey, whose registration is the account's first sign-in.
    static func insert(_ c: CredentialRow, _ db: any SQLSession, uses: Int64 = 0) throws(StoreError) {
        try db.query(
            "INSERT INTO credentials (\(credentialColumns), use_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(uses)) ON CONFLICT (id) DO NOTHING",
            [.blob(c.id), .text(c.userID), .blob(c.publicKey), .int(Int64(c.algorithm)), .int(c.signCount), .text(c.aaguid), .text(c.format),
             .int(c.backupEligible ? 1 : 0), .int(c.backupState ? 1 : 0), .text(c.transports.joined(separator: ",")),
             c.name.map(SQLValue.text) ?? .null, .int(c.createdAt), c.lastUsedAt.map(SQLValue.int) ?? .null, c.revokedAt.map(SQLValue.int) ?? .null,
             c.recoveryID.map(SQLValue.text) ?? .null, .int(c.attested ? 1 : 0), c.attestationRoot.map(SQLValue.blob) ?? .null])
        guard db.changes == 1 else { throw StoreError(.credentialTaken, "a passkey with this credential ID exists") }
    }

    public func user(id: String) throws(StoreError) -> UserRecord? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.userSelect) FROM users WHERE id = ?", [.text(id)]).first.map(Self.user) }
    }

    public func user(email: String) throws(StoreError) -> UserRecord? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.userSelect) FROM users WHERE email = ?", [.text(email)]).first.map(Self.user) }
    }

    public func credential(id: [UInt8]) throws(StoreError) -> CredentialRow? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.credentialColumns) FROM credentials WHERE id = ?", [.blob(id)]).first.map(Self.credential) }
    }

    public func credentials(userID: String) throws(StoreError) -> [CredentialRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.credentialColumns) FROM credentials WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map(Self.credential)
        }
    }

    /// `columns` each prefixed with the table's alias.
    static func prefixed(_ columns: String, _ table: String) -> String {
        columns.split(separator: ",").map { table + "." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    static let credentialColumnCount = credentialColumns.split(separator: ",").count
    static let credentialAndUserSQL: String = {
        return "SELECT \(prefixed(credentialColumns, "c")), \(prefixed(userSelect, "u")) FROM credentials c JOIN users u ON u.id = c.user_id WHERE c.id = ?"
    }()

    public func credentialAndUser(credentialID: [UInt8]) throws(StoreError) -> (CredentialRow, UserRecord)? {
        try locked { db throws(StoreError) in
            guard let row = try db.query(Self.credentialAndUserSQL, [.blob(credentialID)]).first else { return nil }
            return (Self.credential(Array(row[0..<Self.credentialColumnCount])), Self.user(Array(row[Self.credentialColumnCount...])))
        }
    }

    /// The use of a credential, made only while the credential is the one verified and its
    /// counter moves forward (WebAuthn §7.2 step 23): checked and written in one statement, so two
    /// uses at once can never both pass against the same stored count. This is the only place
    /// that records a passkey's use: sign-ins and passkey-approved actions both come here.
    static func guardedUse(_ use: CredentialUse, _ db: any SQLSession) throws(StoreError) -> UseRefusal? {
        try db.query(
            """
            UPDATE credentials SET sign_count = ?, backup_state = ?, last_used_at = ?, use_count = use_count + 1
            WHERE id = ? AND user_id = ? AND public_key = ? AND revoked_at IS NULL AND (sign_count < ? OR (? = 0 AND sign_count = 0))
            """, [
                .int(use.signCount), .int(use.backupState ? 1 : 0), .int(use.at), .blob(use.credentialID), .text(use.userID),
                .blob(use.publicKey), .int(use.signCount), .int(use.signCount),
            ])
        if db.changes == 1 { return nil }
        // Why not: read once, on this rare path only.
        let row = try db.query("SELECT user_id, public_key, revoked_at, sign_count FROM credentials WHERE id = ?", [.blob(use.credentialID)]).first
        guard let row, row[0].text == use.userID, row[1].blob == use.publicKey else { return .credentialUnknown }
        return row[2].int != nil ? .credentialRevoked : .counterRegression(stored: row[3].int ?? 0)
    }

    /// Thrown inside ``completeSignIn(_:writes:)``'s transaction to roll it back when the sign-in
    /// is refused; never leaves it.
    private static let refusal = StoreError(StoreError.Code(rawValue: "sign_in_refused"), "the guarded use refused the sign-in")

    public func completeSignIn(_ use: SignInUse, writes: [StoreWrite]) throws(StoreError) -> SignInOutcome {
        if pool is PostgresPool, let statement = Self.postgresSignIn(use, writes: writes) {
            guard statement.proofs.isEmpty else { return try completePostgresSignIn(use, statement) }
            return try signInBatcher.submit(BatchedSignIn(use: use, statement: statement)) { batch in runSignInBatch(batch) }.get()
        }
        var refused: UseRefusal?
        do {
            return try locked { db throws(StoreError) in
                try db.transaction { () throws(StoreError) -> SignInOutcome in
                    try Self.apply(.useSession(id: use.sessionID, expiresAt: use.sessionExpiresAt), db)
                    refused = try Self.guardedUse(use.credential, db)
                    if refused != nil { throw Self.refusal }
                    for write in writes { try Self.apply(write, db) }
                    guard let user = try db.query("SELECT \(Self.userSelect) FROM users WHERE id = ?", [.text(use.credential.userID)]).first.map(Self.user) else {
                        refused = .credentialUnknown
                        throw Self.refusal
                    }
                    // A blocked account signs in nowhere: its refresh token and audit row roll back.
                    if user.blocked {
                        refused = .userBlocked
                        throw Self.refusal
                    }
                    return .signedIn(user)
                }
            }
        } catch {
            if let refused, error == Self.refusal { return .refused(refused) }
            throw error
        }
    }

    public func recordUse(_ use: CredentialUse) throws(StoreError) -> UseRefusal? {
        try locked { db throws(StoreError) in try Self.guardedUse(use, db) }
    }

    public func renameCredential(id: [UInt8], userID: String, name: String) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query("UPDATE credentials SET name = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.text(name), .blob(id), .text(userID)])
            return db.changes == 1
        }
    }

    public func revokeCredential(id: [UInt8], userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> CredentialRevocation {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> CredentialRevocation in
                try db.lockForTransaction("user:" + userID)
                try db.query(
                    """
                    UPDATE credentials SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL
                    AND (SELECT COUNT(*) FROM credentials WHERE user_id = ? AND revoked_at IS NULL) > 1
                    """, [.int(at), .blob(id), .text(userID), .text(userID)])
                if db.changes == 1 {
                    let cascaded = try Self.revokeApproved(by: Base64URL.encode(id), userID: userID, at: at, db)
                    try Self.queueLogouts(userID: userID, at: at, db)
                    for write in writes(cascaded) { try Self.apply(write, db) }
                    return .revoked
                }
                let live = try db.query("SELECT 1 FROM credentials WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.blob(id), .text(userID)])
                return live.isEmpty ? .notFound : .lastCredential
            }
        }
    }

    // MARK: audit

    public func appendAudit(_ e: AuditEvent) throws(StoreError) {
        try locked { db throws(StoreError) in try Self.apply(.audit(e), db) }
    }

    public func auditEvents(limit: Int) throws(StoreError) -> [AuditEvent] {
        try locked { db throws(StoreError) in
            try db.query(
                "SELECT at, kind, outcome, reason, user_id, client_id, credential_id, remote, request_id, detail FROM audit_events ORDER BY id DESC LIMIT ?",
                [.int(Int64(limit))]
            ).map { r in
                AuditEvent(at: r[0].int ?? 0, kind: r[1].text ?? "", outcome: r[2].text ?? "", reason: r[3].text, userID: r[4].text, clientID: r[5].text,
                           credentialID: r[6].text, remote: r[7].text, requestID: r[8].text, detail: r[9].text)
            }
        }
    }

    public func rowCounts() throws(StoreError) -> [String: Int] {
        try locked { db throws(StoreError) in
            var counts: [String: Int] = [:]
            for table in ["users", "credentials", "used_sessions", "refresh_tokens", "signing_keys", "audit_events", "device_keys", "action_challenges", "email_codes", "outbox", "recovery_codes", "recoveries", "clients", "device_codes", "web_sessions", "authorization_codes", "ended_sessions", "logout_subscriptions", "log_streams"] {
                counts[table] = Int(try db.query("SELECT COUNT(*) FROM \(table)").first?[0].int ?? 0)
            }
            return counts
        }
    }

    public func ping() throws(StoreError) {
        _ = try locked { db throws(StoreError) in try db.query("SELECT 1") }
    }
}

/// The SQLite store: ``SQLStore`` on one SQLite file.
public typealias SQLiteStore = SQLStore
