import Foundation
import SignetAuth
import SignetCrypto
@testable import SignetStore
import SignetTestSupport
import Testing

/// `SQLStore.copy(into:)`: every row of every table, between SQLite and PostgreSQL both ways,
/// all or nothing, checked after it is written.
@Suite struct DatabaseCopyTests {
    /// A direction of copy the machine can run (PostgreSQL ones when the test command started it).
    struct Direction: CustomTestStringConvertible, Sendable {
        let from: Backend, to: Backend
        var testDescription: String { "\(from.rawValue) to \(to.rawValue)" }
        static var available: [Direction] {
            Backend.available.count == 1 ? [Direction(from: .sqlite, to: .sqlite)]
                : [Direction(from: .sqlite, to: .sqlite), Direction(from: .sqlite, to: .postgres), Direction(from: .postgres, to: .sqlite)]
        }
    }

    static func open(_ backend: Backend) throws -> SQLStore { try #require(try backend.open() as? SQLStore) }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Digest.sha256.hash(bytes) }

    /// A column as its catalogue declares it.
    struct Column {
        let name: String
        let wide: Bool
        let kind: Character  // i integer, t text, b bytes
        let nullable: Bool
        let key: Bool
    }

    static func columns(_ store: SQLStore, _ table: String) throws -> [Column] {
        try store.locked { db throws(StoreError) in
            if store.backend == "postgres" {
                let keys = Set(try DatabaseCopier.shapes(db, backend: "postgres").first { $0.name == table }?.key ?? [])
                return try db.query("SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?",
                                    [.text(table)]).map { r in
                    let type = r[1].text ?? ""
                    return Column(name: r[0].text ?? "", wide: type == "bigint", kind: type.contains("int") ? "i" : type == "bytea" ? "b" : "t",
                                  nullable: r[2].text == "YES", key: keys.contains(r[0].text ?? ""))
                }
            }
            return try db.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [.text(table)]).map { r in
                let type = (r[1].text ?? "").uppercased()
                return Column(name: r[0].text ?? "", wide: type == "BIGINT", kind: type.contains("INT") ? "i" : type == "BLOB" ? "b" : "t",
                              nullable: r[2].int == 0 && (r[3].int ?? 0) == 0, key: (r[3].int ?? 0) > 0)
            }
        }
    }

    /// Three rows in every table, each value at an edge of its kind: the widest integers the
    /// column holds, negative ones, text with combining marks, an emoji, quotes and a newline,
    /// every byte value, empty text and bytes, and NULL in the third row where allowed.
    /// `user_id` and `role_id` columns name the three accounts and roles (the foreign keys).
    static func fill(_ store: SQLStore) throws -> [String] {
        let tables = try store.locked { db throws(StoreError) in try DatabaseCopier.shapes(db, backend: store.backend) }.map(\.name)
        for table in tables {
            let columns = try columns(store, table)
            for n in 0..<3 {
                let values: [SQLValue] = columns.map { c in
                    if c.name == "user_id" { return .text("user-\(n)") }
                    if c.name == "id" && table == "users" { return .text("user-\(n)") }
                    if c.name == "role_id" || (c.name == "id" && table == "roles") { return .text("role-\(n)") }
                    if n == 2 && c.nullable { return .null }
                    // A JSON column that schema 28 indexes a member of: JSON, that member at its edges too.
                    if c.name == "app_metadata" { return .text(n == 0 ? #"{"scim_user_name":"e\u0301\ud83d\ude80 'q' \"d\" \\ \n","x":[1]}"# : "{}") }
                    switch c.kind {
                    case "i":
                        // A key counts on from a small number, as a sequence does.
                        if c.key { return .int(Int64(1 + n)) }
                        return .int([c.wide ? .max : Int64(Int32.max), c.wide ? .min : Int64(Int32.min), 0][n])
                    case "b": return .blob(n == 0 ? Array(0...255) : n == 1 ? [] : [UInt8(n)] + Array("\(table).\(c.name)".utf8))
                    default:
                        return .text(n == 0 ? "e\u{301}\u{1F680} 'q' \"d\" \\ \n\(table).\(c.name)" : n == 1 ? "" : "plain \(n)")
                    }
                }
                try store.locked { db throws(StoreError) in
                    try db.query("INSERT INTO \(table) (\(columns.map(\.name).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))", values)
                }
            }
        }
        return tables
    }

    /// Every row of `table`, each encoded, sorted: equal for equal contents in any order.
    static func rows(_ store: SQLStore, _ table: String) throws -> [[UInt8]] {
        let shapes = try store.reading { db throws(StoreError) in try DatabaseCopier.shapes(db, backend: store.backend) }
        let shape = try #require(shapes.first { $0.name == table })
        return try store.reading { db throws(StoreError) in
            try db.query("SELECT \(shape.columns.joined(separator: ", ")) FROM \(table)").map(DatabaseCopier.encoded).sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    static func counts(_ store: SQLStore) throws -> [String: Int] {
        try store.reading { db throws(StoreError) in
            var counts: [String: Int] = [:]
            for table in try DatabaseCopier.shapes(db, backend: store.backend) {
                counts[table.name] = Int(try db.query("SELECT COUNT(*) FROM \(table.name)").first?[0].int ?? -1)
            }
            return counts
        }
    }

    @Test("every row of every table, every kind of value, copied exactly and checked", arguments: Direction.available)
    func everyRow(_ direction: Direction) throws {
        let source = try Self.open(direction.from), target = try Self.open(direction.to)
        let tables = try Self.fill(source)
        #expect(tables.count >= 20 && tables.first == "users")
        var shown: [String] = []
        let report = try source.copy(into: target, digest: Self.sha256) { shown.append($0.name) }
        #expect(report.tables.map(\.name) == tables && shown == tables && report.changedSince.isEmpty)
        #expect(report.tables.allSatisfy { $0.rows == 3 } && report.rows == 3 * tables.count)
        let latest = try source.schemaVersions().last
        #expect(report.schemaVersion == latest)
        for table in tables {
            let copied = try Self.rows(target, table), original = try Self.rows(source, table)
            #expect(copied.count == 3 && copied == original, "\(table)")
        }
        // The target goes on from the copied rows: a new audit row takes a new number (a
        // PostgreSQL sequence set past the copied ones; SQLite's next rowid).
        try target.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success"))
        #expect(try Self.counts(target)["audit_events"] == 4)
    }

    @Test("a target with rows, another schema, or the source itself is refused, and nothing is written", arguments: Backend.available)
    func refusals(_ backend: Backend) throws {
        let source = try Self.open(.sqlite)
        _ = try Self.fill(source)
        func refused(_ target: SQLStore) -> DatabaseCopyError.Code? {
            do {
                _ = try source.copy(into: target, digest: Self.sha256)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(refused(source) == .sameDatabase)

        let held = try Self.open(backend)
        try held.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success"))
        #expect(refused(held) == .targetNotEmpty)
        #expect(try Self.counts(held).values.reduce(0, +) == 1)

        let widened = try Self.open(backend)
        try widened.locked { db throws(StoreError) in try db.query("ALTER TABLE users ADD COLUMN extra TEXT") }
        #expect(refused(widened) == .schemaDiffers)
        let older = try Self.open(backend)
        try older.locked { db throws(StoreError) in try db.query("DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)") }
        #expect(refused(older) == .schemaDiffers)
        let written = try Self.counts(widened).values.reduce(0, +) + Self.counts(older).values.reduce(0, +)
        #expect(written == 0)
    }

    @Test("a copy that fails part-way leaves the target empty: a full disk, a value the target's column cannot hold")
    func allOrNothing() throws {
        let source = try Self.open(.sqlite)
        _ = try Self.fill(source)
        // Enough rows that the copy outgrows the target's cap after some tables are written.
        for n in 0..<400 {
            try source.appendAudit(AuditEvent(at: Int64(n), kind: "sign_in", outcome: "failure", reason: String(repeating: "x", count: 500)))
        }
        let full = try Self.open(.sqlite)
        try full.limitPages(try full.pageCount() + 40)
        do {
            _ = try source.copy(into: full, digest: Self.sha256)
            Issue.record("copied past the cap")
        } catch {
            #expect(error.code == .database && error.detail.contains("storage_full"), "\(error)")
        }
        #expect(try Self.counts(full).values.allSatisfy { $0 == 0 })

        guard Backend.available.contains(.postgres) else { return }
        // SQLite stores any integer in an INTEGER column; PostgreSQL's holds 32 bits.
        try source.locked { db throws(StoreError) in try db.query("UPDATE credentials SET algorithm = ? WHERE user_id = 'user-2'", [.int(Int64(Int32.max) + 1)]) }
        let postgres = try Self.open(.postgres)
        do {
            _ = try source.copy(into: postgres, digest: Self.sha256)
            Issue.record("PostgreSQL took a 33-bit integer")
        } catch {
            #expect(error.code == .database && error.detail.contains("left as it was"), "\(error)")
        }
        #expect(try Self.counts(postgres).values.allSatisfy { $0 == 0 })
    }

    @Test("the check after the commit: rows read back that do not match what was read fail the copy")
    func verification() throws {
        let source = try Self.open(.sqlite), target = try Self.open(.sqlite)
        _ = try Self.fill(source)
        // A digest that never answers twice alike: the sums read back cannot match.
        var calls: UInt8 = 0
        do {
            _ = try source.copy(into: target, digest: { bytes in calls &+= 1; return Self.sha256(bytes + [calls]) })
            Issue.record("a mismatch passed the check")
        } catch {
            #expect(error.code == .verificationFailed && error.detail.contains("users"), "\(error)")
        }
    }

    @Test("rows written to the source after the snapshot are named, and not in the copy")
    func changedSince() throws {
        let source = try Self.open(.sqlite), target = try Self.open(.sqlite)
        _ = try Self.fill(source)
        var wrote = false
        let report = try source.copy(into: target, digest: Self.sha256) { _ in
            guard !wrote else { return }
            wrote = true
            try? source.appendAudit(AuditEvent(at: 9, kind: "sign_in", outcome: "success"))
        }
        #expect(report.changedSince == ["audit_events"])
        let (copied, now) = (try Self.counts(target)["audit_events"], try Self.counts(source)["audit_events"])
        #expect(copied == 3 && now == 4)
    }
}
