import SignetAuth
import CSQLite
import Foundation
import SignetStore
import Testing

/// SQLite's process-wide settings (``SQLiteLibrary``) are in force wherever the store uses it.
@Suite struct SQLiteLibraryTests {
    @Test("SQLite keeps no memory statistics: configured before its first use, no allocation counted")
    func memoryStatisticsOff() throws {
        let path = TemporaryDatabase.path("signet-library")
        defer { TemporaryDatabase.remove(path) }
        let store = try SQLStore(path: path)
        try store.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success"))
        #expect(try store.auditEvents(limit: 1).map(\.at) == [1])
        #expect(SQLiteLibrary.configured)
        // With the statistics on, this counts every byte SQLite holds: the open store's caches.
        #expect(sqlite3_memory_used() == 0)
    }
}
