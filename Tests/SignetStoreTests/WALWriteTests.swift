import SignetAuth
import CSQLite
import Foundation
import SignetStore
import Testing

/// The WAL write gathering (``WALWriteVFS``) must leave in the file, by the time each COMMIT
/// returns, exactly what SQLite's own VFS would: these tests commit through it and then read the
/// files as they are at that moment (a copy, as after a crash) with the stock VFS, whose
/// recovery checks every frame's checksum.
@Suite struct WALWriteTests {
    final class Connection {
        let db: OpaquePointer
        init(_ path: String, vfs: String?) throws {
            _ = SQLiteLibrary.configured  // SQLite's settings come before its first use in this process
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs) == SQLITE_OK, let handle else {
                throw StoreError(.unavailable, "open \(path)")
            }
            db = handle
        }
        deinit { sqlite3_close(db) }

        @discardableResult
        func run(_ sql: String) throws -> [String] {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw StoreError(.internalError, String(cString: sqlite3_errmsg(db))) }
            defer { sqlite3_finalize(statement) }
            var rows: [String] = []
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { return rows }
                guard rc == SQLITE_ROW else { throw StoreError(.internalError, String(cString: sqlite3_errmsg(db))) }
                rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
            }
        }
    }

    /// The database and its WAL copied as they are now, opened with the stock VFS.
    static func crashCopy(_ path: String) throws -> Connection {
        let copy = path + "-copy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        return try Connection(copy, vfs: nil)
    }

    @Test("commits, small and large (spilled, with pages rewritten in the WAL), are whole in the file when COMMIT returns")
    func commitsAreInTheFile() throws {
        #expect(WALWriteVFS.registered)
        let path = TemporaryDatabase.path("wal")
        let writer = try Connection(path, vfs: WALWriteVFS.name)
        try writer.run("PRAGMA journal_mode = WAL")
        try writer.run("PRAGMA synchronous = NORMAL")
        try writer.run("PRAGMA wal_autocheckpoint = 0")
        // A page cache of a few pages, so a large transaction spills into the WAL before its
        // commit and then changes spilled pages again (SQLite rewrites those frames in place and
        // then their headers' checksums).
        try writer.run("PRAGMA cache_size = 8")
        try writer.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        let commitsBefore = WALWriteVFS.commitCount
        // Small commits, one frame or a few each.
        for i in 1...50 { try writer.run("INSERT INTO t (id, v) VALUES (\(i), zeroblob(\(i * 10)))") }
        #expect(try Self.crashCopy(path).run("SELECT count(*) || ':' || sum(length(v)) FROM t") == ["50:12750"])

        // One large transaction.
        let rewritesBefore = WALWriteVFS.writeThroughCount
        try writer.run("BEGIN")
        try writer.run("WITH RECURSIVE n(i) AS (SELECT 51 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO t (id, v) SELECT i, randomblob(400) FROM n")
        try writer.run("UPDATE t SET v = randomblob(300) WHERE id % 7 = 0")
        try writer.run("COMMIT")
        // The copy first: anything the writer does next could write out what is pending.
        let recovered = try Self.crashCopy(path)
        #expect(WALWriteVFS.writeThroughCount > rewritesBefore, "the transaction did not rewrite any frame header")
        let expected = try writer.run("SELECT count(*) || ':' || sum(length(v)) || ':' || sum(unicode(hex(v))) FROM t")
        #expect(try recovered.run("PRAGMA integrity_check") == ["ok"])
        #expect(try recovered.run("SELECT count(*) || ':' || sum(length(v)) || ':' || sum(unicode(hex(v))) FROM t") == expected)

        // Another connection sees every commit too, and a rolled-back transaction leaves nothing.
        try writer.run("BEGIN")
        try writer.run("UPDATE t SET v = randomblob(500)")
        try writer.run("ROLLBACK")
        try writer.run("DELETE FROM t WHERE id > 2000")
        let reader = try Connection(path, vfs: WALWriteVFS.name)
        #expect(try reader.run("SELECT count(*) FROM t") == ["2000"])
        #expect(try Self.crashCopy(path).run("SELECT count(*) FROM t") == ["2000"])
        #expect(WALWriteVFS.commitCount > commitsBefore + 50)
    }
}

/// DESIGN.md, "Reliability rules": with SQLite, every write reaches the disk before the store
/// call that made it returns (so before the answer), unless a deployment opts into `normal`.
@Suite struct DurabilityTests {
    static func open(durable: Bool) throws -> (SQLStore, String) {
        let path = TemporaryDatabase.path("signet-sync")
        // No background checkpoint during the count (it syncs too).
        return (try SQLStore(path: path, durable: durable, checkpointInterval: 3600), path)
    }

    @Test("durable: each write call returns after one sync of the WAL that covers it, made outside the commit's lock; normal: none; reads: none")
    func syncPerWrite() throws {
        for durable in [true, false] {
            let (store, path) = try Self.open(durable: durable)
            defer { TemporaryDatabase.remove(path) }
            try store.appendAudit(AuditEvent(at: 0, kind: "warm", outcome: "success"))
            for i in 1...20 {
                let (syncs, inCommit) = (store.durableSyncs, WALWriteVFS.walSyncCount(path))
                try store.appendAudit(AuditEvent(at: Int64(i), kind: "sign_in", outcome: "success"))
                // Counted when the call has returned: the sync was made before it returned.
                #expect(store.durableSyncs - syncs == (durable ? 1 : 0), "durable \(durable), write \(i)")
                // Never inside SQLite's commit, with the store's lock held.
                #expect(WALWriteVFS.walSyncCount(path) == inCommit)
            }
            let before = store.durableSyncs
            _ = try store.auditEvents(limit: 5)
            _ = try store.user(email: "nobody@signet.test")
            #expect(store.durableSyncs == before)
        }
    }

    @Test("group commit: 64 writes at once from 8 threads all return durable, sharing syncs")
    func groupCommit() throws {
        let (store, path) = try Self.open(durable: true)
        // A slow disk (each sync 20 ms): the commits made while one sync runs share the next.
        store.slowSyncs(0.02)
        defer { TemporaryDatabase.remove(path) }
        try store.appendAudit(AuditEvent(at: 0, kind: "warm", outcome: "success"))
        let before = store.durableSyncs
        // Eight real threads (concurrentPerform would run only as many as there are cores).
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                for i in 0..<8 { try? store.appendAudit(AuditEvent(at: Int64(thread * 100 + i), kind: "sign_in", outcome: "success")) }
                group.leave()
            }.start()
        }
        group.wait()
        let syncs = store.durableSyncs - before
        #expect(try store.auditEvents(limit: 100).count == 65)
        print("group commit: \(syncs) syncs for 64 writes")
        #expect(syncs >= 8 && syncs <= 32, "\(syncs) syncs for 64 writes")
    }
}
