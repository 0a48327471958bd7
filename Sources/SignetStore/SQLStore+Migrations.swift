import SignetAuth
import Foundation

extension SQLStore {
    /// Applies the migrations `schema` lists that `schema_migrations` does not, in order, each in
    /// a transaction with its row there; instances starting at once take turns through an
    /// advisory lock that each transaction takes.
    ///
    /// On PostgreSQL an index that ``Schema/builtConcurrently`` names is built outside a
    /// transaction, and the turns for it are another advisory lock, taken by polling
    /// (``PostgresConnection/takeBuildTurn()``). The build waits for every transaction older
    /// than its own snapshots, so it must never hold a lock that such a transaction waits for:
    /// the migrations' lock stays free for other instances, of this version or an older one.
    func migrate(_ schema: [(version: Int, sql: String)]) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.lockForTransaction("signet-migrations")
                try db.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)")
                try Self.refuseNewer(db, known: schema.last?.version ?? 0)
            }
            for migration in schema {
                if let postgres = db as? PostgresConnection, let index = Schema.builtConcurrently[migration.version] {
                    try postgres.takeBuildTurn()
                    defer { postgres.endBuildTurn() }
                    guard try !Self.applied(migration.version, postgres) else { continue }
                    try Self.buildConcurrently(postgres, index, sql: migration.sql)
                    try Self.record(migration.version, postgres)
                    continue
                }
                try db.transaction { () throws(StoreError) in
                    try db.lockForTransaction("signet-migrations")
                    guard try !Self.applied(migration.version, db) else { return }
                    for statement in migration.sql.split(separator: ";") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                        try db.query(String(statement))
                    }
                    try Self.dataMigrations[migration.version]?(db)
                    try Self.record(migration.version, db)
                }
            }
        }
    }

    /// Refuses a database that a newer Signet migrated: this build would not know its newer
    /// columns and rules (a role given for a time, schema 33, would never end under a build
    /// before it). The operator runs the release that wrote it, or a newer one, or restores a
    /// copy made before the upgrade. Checked at every start, before any migration of this
    /// build's is applied.
    static func refuseNewer(_ db: any SQLSession, known: Int) throws(StoreError) {
        let newest = try db.query("SELECT MAX(version) FROM schema_migrations").first?[0].int.map(Int.init) ?? 0
        guard newest <= known else {
            throw StoreError(.schemaNewer, "the database is at schema \(newest), and this signet knows schemas up to \(known): "
                + "run the release that upgraded it (or a newer one), or restore a backup made before that upgrade")
        }
    }

    static func applied(_ version: Int, _ db: any SQLSession) throws(StoreError) -> Bool {
        try !db.query("SELECT 1 FROM schema_migrations WHERE version = ?", [.int(Int64(version))]).isEmpty
    }

    static func record(_ version: Int, _ db: any SQLSession) throws(StoreError) {
        try db.query("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [.int(Int64(version)), .int(now())])
    }

    /// PostgreSQL: builds the index `name` with `sql` (a `CREATE INDEX CONCURRENTLY`), which holds
    /// only a lock that lets rows be written while it builds: a plain `CREATE INDEX` blocks every
    /// write to the table for the whole build, and while it waits for a transaction open on the
    /// table, every write queued behind it waits too. A build that failed part-way (the process
    /// stopped, the connection dropped) leaves the index marked invalid; it is dropped and built
    /// again. A valid index of that name is kept: its build finished before its version was
    /// recorded.
    static func buildConcurrently(_ db: PostgresConnection, _ name: String, sql: String) throws(StoreError) {
        let valid = try db.query("SELECT CASE WHEN indisvalid THEN 1 ELSE 0 END FROM pg_index WHERE indexrelid = to_regclass(?)", [.text(name)])
        if valid.first?[0].bool == true { return }
        if !valid.isEmpty { try db.query("DROP INDEX CONCURRENTLY " + name) }
        try db.query(sql)
    }

    /// Migrations that change rows in a way SQL cannot say, run in their version's transaction
    /// after its statements, on both databases.
    static let dataMigrations: [Int: @Sendable (any SQLSession) throws(StoreError) -> Void] = [11: normalizeAddresses]

    /// Schema 11: every stored address in NFC (Unicode's composed form), as sign-up and sign-in
    /// have keyed addresses since; before, an address typed with a combining accent was stored as
    /// typed, and the same address typed composed no longer found it. An address whose NFC form
    /// another account already has stays as it is: two accounts cannot be merged here.
    static func normalizeAddresses(_ db: any SQLSession) throws(StoreError) {
        let rows = try db.query("SELECT id, email FROM users")
        // Bytes, not Strings: Swift compares strings by canonical equivalence, so a decomposed
        // address would equal its NFC form.
        var taken = Set(rows.compactMap { $0[1].text.map { Array($0.utf8) } })
        for row in rows {
            guard let id = row[0].text, let email = row[1].text else { continue }
            let nfc = Array(email.precomposedStringWithCanonicalMapping.utf8)
            guard nfc != Array(email.utf8), !taken.contains(nfc) else { continue }
            try db.query("UPDATE users SET email = ? WHERE id = ?", [.text(String(decoding: nfc, as: UTF8.self)), .text(id)])
            taken.insert(nfc)
        }
    }
}

extension PostgresConnection {
    /// Waits for the index builds' advisory lock, held by this connection until
    /// ``endBuildTurn()`` or its end. It polls rather than blocks: a statement blocked on the
    /// lock would hold a snapshot, and the holder's build waits for every older snapshot, so the
    /// two would wait on each other.
    func takeBuildTurn() throws(StoreError) {
        while try query("SELECT pg_try_advisory_lock(hashtext('signet-index-builds'))", []).first?[0].bool != true {
            usleep(50_000)
        }
    }

    func endBuildTurn() {
        _ = try? query("SELECT pg_advisory_unlock(hashtext('signet-index-builds'))", [])
    }
}
