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
        case .addCredential(let c):
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

    // MARK: device keys and actions

    static let deviceKeyColumns = "id, user_id, device_id, platform, name, public_key, created_at, last_used_at, revoked_at, recovery_id, approved_by"

    static func deviceKey(_ r: [SQLValue]) -> DeviceKeyRow {
        DeviceKeyRow(id: r[0].text ?? "", userID: r[1].text ?? "", deviceID: r[2].text ?? "", platform: r[3].text ?? "", name: r[4].text,
                     publicKey: r[5].blob ?? [], createdAt: r[6].int ?? 0, lastUsedAt: r[7].int, revokedAt: r[8].int, recoveryID: r[9].text,
                     approvedBy: r[10].text)
    }

    public func enrollDeviceKey(_ k: DeviceKeyRow, limit: Int, writes: (_ revoked: [String]) -> [StoreWrite]) throws(StoreError) -> [String] {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [String] in
                try db.lockForTransaction("user:" + k.userID)
                let replaced = try db.query(
                    "UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND device_id = ? AND revoked_at IS NULL RETURNING id",
                    [.int(k.createdAt), .text(k.userID), .text(k.deviceID)]).compactMap { $0[0].text }
                let live = try db.query("SELECT COUNT(*) FROM device_keys WHERE user_id = ? AND revoked_at IS NULL", [.text(k.userID)]).first?[0].int ?? 0
                guard live < Int64(limit) else { throw StoreError(.deviceKeyLimit, "\(live) live device keys") }
                try db.query(
                    "INSERT INTO device_keys (\(Self.deviceKeyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [.text(k.id), .text(k.userID), .text(k.deviceID), .text(k.platform), k.name.map(SQLValue.text) ?? .null, .blob(k.publicKey),
                     .int(k.createdAt), .null, .null, k.recoveryID.map(SQLValue.text) ?? .null, k.approvedBy.map(SQLValue.text) ?? .null])
                for write in writes(replaced) { try Self.apply(write, db) }
                return replaced
            }
        }
    }

    public func deviceKeys(userID: String) throws(StoreError) -> [DeviceKeyRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.deviceKeyColumns) FROM device_keys WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map(Self.deviceKey)
        }
    }

    public func deviceKey(id: String) throws(StoreError) -> DeviceKeyRow? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.deviceKeyColumns) FROM device_keys WHERE id = ?", [.text(id)]).first.map(Self.deviceKey) }
    }

    public func revokeDeviceKey(id: String, userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE device_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.int(at), .text(id), .text(userID)])
                guard db.changes == 1 else { return false }
                let cascaded = try Self.revokeApproved(by: id, userID: userID, at: at, db)
                for write in writes(cascaded) { try Self.apply(write, db) }
                return true
            }
        }
    }

    /// Revokes the device keys enrolled by devices that `credential` approved (``DeviceKeyRow/
    /// approvedBy``), and those their keys approved, and so on; their IDs. Bounded to 16
    /// generations (a device approved by a device approved by ...).
    static func revokeApproved(by credential: String, userID: String, at: Int64, _ db: any SQLSession) throws(StoreError) -> [String] {
        var frontier = [credential]
        var revoked: [String] = []
        for _ in 0..<16 where !frontier.isEmpty {
            var next: [String] = []
            for approver in frontier {
                next += try db.query("UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND approved_by = ? AND revoked_at IS NULL RETURNING id",
                                     [.int(at), .text(userID), .text(approver)]).compactMap { $0[0].text }
            }
            revoked += next
            frontier = next
        }
        return revoked
    }

    public func touchDeviceKey(id: String, at: Int64) throws(StoreError) {
        try locked { db throws(StoreError) in try db.query("UPDATE device_keys SET last_used_at = ? WHERE id = ?", [.int(at), .text(id)]) }
    }

    public func createActionChallenge(_ c: ActionChallengeRow, limit: Int, windowStart: Int64) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.lockForTransaction("user:" + c.userID)
                let recent = try db.query("SELECT COUNT(*) FROM action_challenges WHERE user_id = ? AND created_at >= ?", [.text(c.userID), .int(windowStart)]).first?[0].int ?? 0
                guard recent < Int64(limit) else { throw StoreError(.rateLimited, "\(recent) action challenges in the window") }
                try db.query(
                    "INSERT INTO action_challenges (id, user_id, device_key_id, challenge, action_hash, action, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [.text(c.id), .text(c.userID), c.deviceKeyID.map(SQLValue.text) ?? .null, .blob(c.challenge), .blob(c.actionHash), .text(c.action),
                     .int(c.expiresAt), .int(c.createdAt)])
            }
        }
    }

    public func useActionChallenge(id: String, at: Int64) throws(StoreError) -> ActionChallengeRow? {
        try locked { db throws(StoreError) in
            try db.query(
                "UPDATE action_challenges SET used_at = ? WHERE id = ? AND used_at IS NULL RETURNING user_id, device_key_id, challenge, action_hash, action, expires_at, created_at",
                [.int(at), .text(id)]).first.map { r in
                ActionChallengeRow(id: id, userID: r[0].text ?? "", deviceKeyID: r[1].text, challenge: r[2].blob ?? [], actionHash: r[3].blob ?? [],
                                   action: r[4].text ?? "", expiresAt: r[5].int ?? 0, createdAt: r[6].int ?? 0)
            }
        }
    }

    // MARK: auth sessions

    public func useSession(id: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query("INSERT INTO used_sessions (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [.blob(id), .int(expiresAt)])
            return db.changes == 1
        }
    }

    public func purgeUsedSessions(now: Int64) throws(StoreError) -> Int {
        let sessions = try purgeExpired("used_sessions", key: "id", before: now, batch: 500)
        for (table, key, after) in Self.purgedAfterExpiry {
            _ = try purgeExpired(table, key: key, before: now - after, batch: 500)
        }
        return sessions
    }

    /// The tables ``purgeUsedSessions(now:)`` also deletes from, each with its key and how long
    /// after its rows expire they go (milliseconds).
    static let purgedAfterExpiry: [(table: String, key: String, after: Int64)] = [
        // Action challenges count towards the rate limit for a day after they expire.
        ("action_challenges", "id", 86_400_000),
        // Codes live a minute; an hour later nothing can replay them.
        ("authorization_codes", "hash", 3_600_000),
        ("web_sessions", "hash", 86_400_000),
        ("ended_sessions", "sid", 0),
        // A subscription outlives its session's possible end by nothing; a notice or a code's
        // message nobody sent in its time (no sender running) goes a day after.
        ("logout_subscriptions", "sid", 0),
        ("outbox", "id", 86_400_000),
        // An address's code is replaced by its next one; one that expired a day ago throttles
        // nothing any more (an address's sends are counted in rate_counters).
        ("email_codes", "email", 86_400_000),
    ]

    /// The rows of `table` that expired before `before`, `batch` at a time. These tables have no
    /// index on their expiry (a used mark is written by every sign-in, and an index would be one
    /// more page written at random), so finding the rows reads them all: some 300,000 used marks
    /// at 1,000 sign-ins a second. That scan runs on the reading connection, which holds up no
    /// writer; each batch is then deleted by key under the lock, its expiry checked again.
    /// Used marks' keys begin with a time, so their scan meets the expired ones first.
    func purgeExpired(_ table: String, key: String, before: Int64, batch: Int) throws(StoreError) -> Int {
        let batch = max(1, batch)
        let scan = batch * 10
        var purged = 0
        while true {
            let found = try reading { db throws(StoreError) in
                try db.query("SELECT \(key) FROM \(table) WHERE expires_at < ? LIMIT ?", [.int(before), .int(Int64(scan))]).map { $0[0] }
            }
            var start = 0
            var deleted = 0
            while start < found.count {
                let keys = found[start..<min(found.count, start + batch)]
                start += keys.count
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ", ")
                deleted += try locked { db throws(StoreError) -> Int in
                    try db.query("DELETE FROM \(table) WHERE expires_at < ? AND \(key) IN (\(marks))", [.int(before)] + keys)
                    return db.changes
                }
            }
            purged += deleted
            // A round that deleted nothing found only what is gone already: no second look.
            if found.count < scan || deleted == 0 { return purged }
        }
    }

    // MARK: refresh tokens

    static let purgeRefreshBelowSQL = """
        DELETE FROM refresh_tokens WHERE hash IN
            (SELECT hash FROM refresh_tokens WHERE hash >= ? AND hash < ? AND expires_at < ? ORDER BY hash LIMIT ?)
        """
    static let purgeRefreshFromSQL = """
        DELETE FROM refresh_tokens WHERE hash IN
            (SELECT hash FROM refresh_tokens WHERE hash >= ? AND expires_at < ? ORDER BY hash LIMIT ?)
        """

    public func purgeRefreshTokens(from: [UInt8], below: [UInt8]?, expiredBefore: Int64, limit: Int) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            // A range of the primary key, so only the rows in it are read.
            if let below {
                try db.query(Self.purgeRefreshBelowSQL, [.blob(from), .blob(below), .int(expiredBefore), .int(Int64(limit))])
            } else {
                try db.query(Self.purgeRefreshFromSQL, [.blob(from), .int(expiredBefore), .int(Int64(limit))])
            }
            return db.changes
        }
    }

    static func insert(_ t: RefreshTokenRow, _ db: any SQLSession) throws(StoreError) {
        try db.query("INSERT INTO refresh_tokens (\(refreshTokenColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", refreshTokenValues(t))
    }

    public func insertRefreshToken(_ token: RefreshTokenRow) throws(StoreError) {
        try locked { db throws(StoreError) in try Self.insert(token, db) }
    }

    public func rotateRefreshToken(hash: [UInt8], proof: String?, retryWindow: Int64, next: @Sendable (RefreshTokenRow) -> RefreshTokenRow, now: Int64,
                                   writes: [StoreWrite]) throws(StoreError) -> RefreshRotation {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> RefreshRotation in
                let live = try db.query(Self.rotateSQL, [.int(now), .blob(hash), .int(now), proof.map(SQLValue.text) ?? .null])
                if let r = live.first {
                    let current = Self.refreshToken(hash: hash, r)
                    let successor = next(current)
                    try Self.insert(successor, db)
                    // The link a retry follows; without a window nothing retries, so none is kept.
                    if retryWindow > 0 { try db.query("UPDATE refresh_tokens SET successor = ? WHERE hash = ?", [.blob(successor.hash), .blob(hash)]) }
                    for write in writes { try Self.apply(write, db) }
                    return .rotated(successor)
                }
                guard let r = try db.query("SELECT family, user_id, used_at, revoked_at, expires_at, jkt FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first else {
                    return .unknown
                }
                // Live, but bound to another key: refused without using it, so a thief without
                // the key can neither refresh nor burn the owner's token.
                if r[2].int == nil, r[3].int == nil, (r[4].int ?? 0) > now, let bound = r[5].text, bound != proof { return .keyMismatch }
                // A retry of a rotation whose answer was lost: the token it made was never shown.
                // The claim locks the token's row, so that of concurrent retries each follows the
                // link the one before it left (PostgreSQL reads the row again after the wait).
                if retryWindow > 0, r[2].int != nil,
                   let previous = try db.query(Self.claimRetrySQL, [.blob(hash), .int(now - retryWindow), .int(now), proof.map(SQLValue.text) ?? .null]).first?[0].blob,
                   let withdrawn = try db.query(Self.withdrawSuccessorSQL, [.int(now), .blob(previous), .int(now)]).first {
                    let successor = next(Self.refreshToken(hash: previous, withdrawn))
                    try Self.insert(successor, db)
                    try db.query("UPDATE refresh_tokens SET successor = ? WHERE hash = ?", [.blob(successor.hash), .blob(hash)])
                    for write in writes { try Self.apply(write, db) }
                    return .retried(successor)
                }
                if r[2].int != nil {
                    try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(now), r[0]])
                    try Self.queueLogout(sid: r[0].text ?? "", at: now, db)
                    return .reused(family: r[0].text ?? "", userID: r[1].text ?? "")
                }
                return r[3].int != nil ? .revoked(userID: r[1].text ?? "") : .expired
            }
        }
    }

    public func refreshTokenOwner(hash: [UInt8]) throws(StoreError) -> (userID: String, jkt: String?, scope: String, clientID: String)? {
        try locked { db throws(StoreError) in
            try db.query("SELECT user_id, jkt, scope, client_id FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first.map {
                ($0[0].text ?? "", $0[1].text, $0[2].text ?? "", $0[3].text ?? "")
            }
        }
    }

    /// The columns ``refreshToken(hash:_:)`` reads, in its order.
    static let refreshTokenFields = "family, user_id, client_id, scope, auth_time, amr, expires_at, created_at, credential_id, jkt"
    // Kept as constants: the statement cache finds a constant text by identity (``SQLiteConnection``).
    static let rotateSQL = """
        UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? AND (jkt IS NULL OR jkt = ?)
        RETURNING \(refreshTokenFields)
        """
    /// A rotated token that may be retried: rotated after the window's start, its family not
    /// revoked, not expired, bound to no key or to the proof's, with the link its rotation kept.
    /// The no-op write locks the row; returns the link.
    static let claimRetrySQL = """
        UPDATE refresh_tokens SET successor = successor
        WHERE hash = ? AND used_at > ? AND revoked_at IS NULL AND expires_at > ? AND successor IS NOT NULL AND (jkt IS NULL OR jkt = ?)
        RETURNING successor
        """
    /// Marks a retried rotation's successor used, while it is still live: whoever shows it later
    /// is then a reuse, which revokes the family.
    static let withdrawSuccessorSQL = """
        UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?
        RETURNING \(refreshTokenFields)
        """
    static let liveRefreshTokenSQL =
        "SELECT \(refreshTokenFields) FROM refresh_tokens WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?"

    static func refreshToken(hash: [UInt8], _ r: [SQLValue]) -> RefreshTokenRow {
        RefreshTokenRow(
            hash: hash, family: r[0].text ?? "", userID: r[1].text ?? "", clientID: r[2].text ?? "", scope: r[3].text ?? "",
            authTime: r[4].int ?? 0, amr: (r[5].text ?? "").split(separator: " ").map(String.init), expiresAt: r[6].int ?? 0,
            createdAt: r[7].int ?? 0, credential: r[8].text, jkt: r[9].text)
    }

    public func liveRefreshToken(hash: [UInt8], now: Int64) throws(StoreError) -> RefreshTokenRow? {
        try locked { db throws(StoreError) in
            try db.query(Self.liveRefreshTokenSQL, [.blob(hash), .int(now)]).first.map { Self.refreshToken(hash: hash, $0) }
        }
    }

    public func revokeRefreshFamily(hash: [UInt8], now: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                guard let family = try db.query("SELECT family FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first?[0] else { return false }
                try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(now), family])
                try Self.queueLogout(sid: family.text ?? "", at: now, db)
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    // MARK: rate limits

    public func count(bucket: String, key: [UInt8], windowStart: Int64) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            // One statement: a new window starts over at 1, the current one counts up.
            let rows = try db.query(
                """
                INSERT INTO rate_counters (bucket, key, window_start, count) VALUES (?, ?, ?, 1)
                ON CONFLICT (bucket, key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = excluded.window_start THEN rate_counters.count + 1 ELSE 1 END,
                    window_start = excluded.window_start
                RETURNING count
                """, [.text(bucket), .blob(key), .int(windowStart)])
            return Int(rows.first?[0].int ?? 1)
        }
    }

    public func rateCounts(_ keys: [RateCounterKey]) throws(StoreError) -> [RateCount] {
        try reading { db throws(StoreError) in
            var counts: [RateCount] = []
            for k in keys {
                let rows = try db.query("SELECT window_start, count FROM rate_counters WHERE bucket = ? AND key = ?", [.text(k.bucket), .blob(k.key)])
                if let row = rows.first { counts.append(RateCount(counter: k, windowStart: row[0].int ?? 0, count: Int(row[1].int ?? 0))) }
            }
            return counts
        }
    }

    public func clearRateCounts(_ keys: [RateCounterKey], writes: [StoreWrite]) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int in
                var cleared = 0
                for k in keys {
                    try db.query("DELETE FROM rate_counters WHERE bucket = ? AND key = ?", [.text(k.bucket), .blob(k.key)])
                    cleared += db.changes
                }
                for write in writes { try Self.apply(write, db) }
                return cleared
            }
        }
    }

    public func purge(now: Int64, auditBefore: Int64, batch: Int = 5_000) throws(StoreError) -> Int {
        // Rows are numbered in time order: the first row new enough is found by reading only the
        // rows that go (no index on the time, which every sign-in would update), and every row
        // below it goes. A row new enough stays so, and later rows have higher numbers.
        let (keep, bounds) = try locked { db throws(StoreError) -> (Int64?, [SQLValue]?) in
            // Windows are at most a day long.
            try db.query("DELETE FROM rate_counters WHERE window_start < ?", [.int(now - 86_400_000)])
            var keep = try db.query("SELECT id FROM audit_events WHERE at >= ? ORDER BY id LIMIT 1", [.int(auditBefore)]).first?[0].int
            // An active log stream keeps every event its endpoint has not taken yet.
            if let held = try db.query("SELECT MIN(last_log_id) FROM log_streams WHERE status = 'active'").first?[0].int {
                keep = min(keep ?? .max, held + 1)
            }
            return (keep, try db.query("SELECT MIN(id), MAX(id) FROM audit_events").first)
        }
        guard var next = bounds?[0].int, let newest = bounds?[1].int else { return 0 }
        // Nothing new enough: every row there was goes but the newest, which always stays. On
        // SQLite a row's ID is one more than the highest left, so an empty table would number
        // events from 1 again, behind every log stream's and checkpoint reader's last ID.
        let end = min(keep ?? newest, newest)
        var purged = 0
        while next < end {
            next = min(end, next + Int64(max(1, batch)))
            purged += try locked { db throws(StoreError) -> Int in
                try db.query("DELETE FROM audit_events WHERE id < ? AND at < ?", [.int(next), .int(auditBefore)])
                return db.changes
            }
        }
        return purged
    }

    // MARK: signing keys

    public func insertSigningKey(_ k: SigningKeyRow) throws(StoreError) {
        try locked { db throws(StoreError) in try Self.insertSigningKey(k, db) }
    }

    public func rotateSigningKey(_ k: SigningKeyRow, unlessCreatedAfter: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.lockForTransaction("signing-keys")
                guard try db.query("SELECT 1 FROM signing_keys WHERE created_at > ? LIMIT 1", [.int(unlessCreatedAfter)]).isEmpty else { return false }
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
