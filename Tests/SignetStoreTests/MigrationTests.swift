import SignetAuth
import Foundation
import SignetStore
import SignetTestSupport
import Testing

/// Upgrades of an existing SQLite file, checked from outside the store with SQLite itself.
@Suite struct MigrationTests {
    /// Runs `sql` on the file at `path` and returns the first column of every row as text.
    static func sqlite(_ path: String, _ sql: String) throws -> [String] {
        _ = SQLiteLibrary.configured  // SQLite's settings come before its first use in this process
        return try rawSQLite(path, sql)
    }

    @Test("schema 11 stores every address in NFC; one whose NFC form another account has stays as it was")
    func addressesInNFC() throws {
        let path = TemporaryDatabase.path("signet-nfc")
        defer { TemporaryDatabase.remove(path) }
        // Accounts as an older build stored them: one address typed with a combining diaeresis,
        // one typed so while the composed form has an account of its own.
        do {
            let store = try SQLStore(path: path)
            for (n, email) in ["ju\u{308}rgen@signet.test", "zoe\u{308}@signet.test", "zoë@signet.test", "ada@signet.test"].enumerated() {
                var account = user(n)
                account.id = "u\(n)"
                account.email = email
                try store.createUser(account, credential: credential(account.id))
            }
        }
        _ = try Self.sqlite(path, "DELETE FROM schema_migrations WHERE version = 11")
        let store = try SQLStore(path: path)
        #expect(try store.schemaVersions() == Array(1...35))
        // Found by its composed form (which sign-in looks up), stored as those bytes.
        #expect(try store.user(email: "jürgen@signet.test")?.id == "u0")
        #expect(try Self.sqlite(path, "SELECT hex(email) FROM users WHERE id = 'u0'") == [Array("jürgen@signet.test".utf8).map { String(format: "%02X", $0) }.joined()])
        // The clash is left alone: both accounts stay, each with its own bytes.
        #expect(try Self.sqlite(path, "SELECT length(CAST(email AS BLOB)) FROM users WHERE id IN ('u1', 'u2') ORDER BY id") == ["17", "16"])
        #expect(try store.user(email: "ada@signet.test")?.id == "u3")
    }

    @Test("schema 14 adds the code key's ID: codes from before have none, keep working, and the re-key that names it labels them")
    func codeKeyIDs() throws {
        let path = TemporaryDatabase.path("signet-code-key")
        defer { TemporaryDatabase.remove(path) }
        let account = user(1)
        do {
            let store = try SQLStore(path: path)
            try store.createUser(account, credential: credential(account.id))
            try store.replaceRecoveryCodes(userID: account.id, hashes: [[1], [2]], keyID: "k1", at: now(), writes: [])
        }
        _ = try Self.sqlite(path, "ALTER TABLE recovery_codes DROP COLUMN key_id; DELETE FROM schema_migrations WHERE version = 14")
        let store = try SQLStore(path: path)
        #expect(try store.schemaVersions() == Array(1...35))
        #expect(try store.recoveryCodes(userID: account.id).map(\.keyID) == [nil, nil])
        let read = try store.sealedMaterial()
        #expect(read.codeKeyIDs == [""])
        var change = read
        change.codeKeyIDs = ["k9"]
        #expect { try store.rekey(change, from: read) } throws: { ($0 as? StoreError)?.code == .conflict }
        change.unlabelledCodeKeyID = "k9"
        try store.rekey(change, from: read)
        #expect(try store.recoveryCodes(userID: account.id).map(\.keyID) == ["k9", "k9"])
    }

    @Test("schema 3 rebuilds SQLite's audit table without AUTOINCREMENT, keeping every row, its id and order")
    func auditWithoutAutoincrement() throws {
        let path = TemporaryDatabase.path("signet-migration")
        defer { TemporaryDatabase.remove(path) }
        // The audit table as schema 2 left it, with rows and a gap in the ids.
        _ = try Self.sqlite(path, """
            CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL);
            INSERT INTO schema_migrations VALUES (1, 0), (2, 0);
            CREATE TABLE refresh_tokens (hash BLOB PRIMARY KEY, family TEXT, user_id TEXT);
            CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT);
            CREATE TABLE credentials (id BLOB PRIMARY KEY);
            CREATE TABLE device_keys (id TEXT PRIMARY KEY);
            CREATE TABLE audit_events (id INTEGER PRIMARY KEY AUTOINCREMENT, at BIGINT NOT NULL, kind TEXT NOT NULL, outcome TEXT NOT NULL,
                reason TEXT, user_id TEXT, client_id TEXT, credential_id TEXT, remote TEXT, request_id TEXT);
            INSERT INTO audit_events (id, at, kind, outcome) VALUES (1, 10, 'sign_up', 'success'), (2, 20, 'sign_in', 'failure'), (7, 30, 'sign_in', 'success');
            """)
        #expect(try Self.sqlite(path, "SELECT name FROM sqlite_sequence") == ["audit_events"])

        let store = try SQLStore(path: path)
        #expect(try store.schemaVersions() == Array(1...35))
        try store.appendAudit(AuditEvent(at: 40, kind: "refresh", outcome: "failure", reason: "refresh_token_reused", detail: "family revoked"))
        #expect(try store.auditEvents(limit: 10).map(\.at) == [40, 30, 20, 10])
        // Schema 4: rows from before have no detail; new ones keep theirs.
        #expect(try store.auditEvents(limit: 10).map(\.detail) == ["family revoked", nil, nil, nil])
        #expect(try Self.sqlite(path, "SELECT id FROM audit_events ORDER BY id") == ["1", "2", "7", "8"])
        #expect(try Self.sqlite(path, "SELECT sql FROM sqlite_master WHERE name = 'audit_events'").first?.contains("AUTOINCREMENT") == false)
        #expect(try Self.sqlite(path, "SELECT count(*) FROM sqlite_sequence WHERE name = 'audit_events'") == ["0"])
        // A file made before keeps its page size.
        #expect(try Self.sqlite(path, "PRAGMA page_size") == ["4096"])
        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"])
    }

    @Test("a new database has 1 KiB pages")
    func newDatabasePageSize() throws {
        let path = TemporaryDatabase.path("signet-pages")
        defer { TemporaryDatabase.remove(path) }
        let store = try SQLStore(path: path)
        try store.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success"))
        #expect(try Self.sqlite(path, "PRAGMA page_size") == ["1024"])
        #expect(try Self.sqlite(path, "PRAGMA journal_mode") == ["wal"])
    }

    @Test("a path that names a file of another kind is refused as not a SQLite database, by its path, and the file is left as it was")
    func notADatabase() throws {
        let path = TemporaryDatabase.path("signet-not-a-database")
        defer { TemporaryDatabase.remove(path) }
        let text = Data(String(repeating: "a configuration file, not a database\n", count: 40).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        #expect { _ = try SQLStore(path: path) } throws: {
            ($0 as? StoreError)?.code == .internalError && "\($0)".contains("\(path) is not a SQLite database")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
