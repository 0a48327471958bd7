import Foundation
import SignetAuth

/// Why ``SQLStore/copy(into:digest:progress:)`` made no copy, or could not vouch for one.
public struct DatabaseCopyError: Error, CustomStringConvertible, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The target holds rows already; nothing was written to it.
        public static let targetNotEmpty = Code(rawValue: "target_not_empty")
        /// The two databases are not at the same schema version or do not hold the same tables
        /// and columns; nothing was written.
        public static let schemaDiffers = Code(rawValue: "schema_differs")
        /// Source and target are one database.
        public static let sameDatabase = Code(rawValue: "same_database")
        /// A read or write failed (``StoreError``); the target's transaction was rolled back.
        public static let database = Code(rawValue: "database")
        /// The copy was committed but what the target holds is not what was read: a bug, or a
        /// writer on the target meanwhile. The target must not be used.
        public static let verificationFailed = Code(rawValue: "verification_failed")
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}

/// What a copy wrote and checked, table by table.
public struct DatabaseCopyReport: Sendable {
    /// A table of the target and the rows it holds, read back after the commit.
    public struct Table: Sendable {
        public let name: String
        public let rows: Int
    }

    /// The schema version both databases are at.
    public let schemaVersion: Int
    /// Every table copied, `users` first.
    public let tables: [Table]
    /// Tables whose rows in the source changed after the snapshot the copy was made from (a
    /// server still writing to it): the copy lacks those changes.
    public let changedSince: [String]

    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
}

extension SQLStore {
    /// Copies every row of every table of this database into `target`, an empty database of the
    /// same schema (a new SQLite file, or a new PostgreSQL database, which opening it migrated):
    /// how a deployment moves between SQLite and PostgreSQL without losing an account, a passkey
    /// or an audit row.
    ///
    /// - The source is read in one snapshot (a read transaction), so the copy is consistent as of
    ///   its start even while a server writes; ``DatabaseCopyReport/changedSince`` names the
    ///   tables that changed afterwards.
    /// - The target is written in one transaction: a failure part-way (a full disk, a value the
    ///   target refuses) leaves it as empty as it was.
    /// - Tables and columns are read from both databases' catalogues and must agree; rows are read
    ///   in primary-key order, a page at a time, and inserted by column name with their values as
    ///   stored (bytes as bytes, the integers of flags and times as integers).
    /// - After the commit, each table of the target is read back and compared with what was read
    ///   from the source: the same number of rows and the same sum (modulo 2²⁵⁶) of each row's
    ///   `digest` (SHA-256 from the caller; the sum does not depend on the order, which the two
    ///   databases' collations may differ on).
    /// - PostgreSQL targets: each serial column's sequence is set past the copied values.
    ///
    /// The signing keys and sealed mail stay sealed under the key-encryption key they were sealed
    /// under; a server on the target needs the same key.
    public func copy(into target: SQLStore, digest: @escaping ([UInt8]) -> [UInt8],
                     progress: (DatabaseCopyReport.Table) -> Void = { _ in }) throws(DatabaseCopyError) -> DatabaseCopyReport {
        try DatabaseCopier(source: self, target: target, digest: digest).run(progress: progress)
    }
}

/// One table as both catalogues describe it.
struct CopiedTableShape: Equatable {
    let name: String
    /// Every column, sorted by name (the order of the digest's encoding).
    let columns: [String]
    /// The primary key's columns, in key order (the order rows are read in).
    let key: [String]
}

/// ``SQLStore/copy(into:digest:progress:)``'s steps.
struct DatabaseCopier {
    let source: SQLStore
    let target: SQLStore
    let digest: ([UInt8]) -> [UInt8]
    /// Rows read or inserted at a time.
    static let page = 500

    func run(progress: (DatabaseCopyReport.Table) -> Void) throws(DatabaseCopyError) -> DatabaseCopyReport {
        guard source !== target else { throw DatabaseCopyError(.sameDatabase, "the source and the target are one database") }
        let (version, tables) = try checkedShapes()
        var read: [String: (rows: Int, sum: RowSum)] = [:]
        var held: [String] = []
        do {
            try source.reading { from throws(StoreError) in
                try from.query(source.backend == "postgres" ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
                defer { _ = try? from.query("COMMIT") }
                try target.locked { to throws(StoreError) in
                    try to.transaction { () throws(StoreError) in
                        held = try rowsHeld(to, tables)
                        guard held.isEmpty else { throw StoreError(.conflict, "the target holds rows") }
                        for table in tables {
                            var rows = 0
                            var sum = RowSum()
                            let insert = Inserter(table: table, session: to)
                            try scan(from, table) { (page: [[SQLValue]]) throws(StoreError) in
                                try insert.rows(page)
                                for row in page { sum.add(digest(Self.encoded(row))) }
                                rows += page.count
                            }
                            read[table.name] = (rows, sum)
                        }
                        if target.backend == "postgres" { try advanceSequences(to, tables) }
                    }
                }
            }
        } catch {
            guard held.isEmpty else {
                throw DatabaseCopyError(.targetNotEmpty, "the target holds rows (\(held.joined(separator: ", "))); copy into a new, empty database")
            }
            throw DatabaseCopyError(.database, "\(error.code.rawValue): \(error.detail); the target was left as it was")
        }
        var report: [DatabaseCopyReport.Table] = []
        var mismatched: [String] = []
        for table in tables {
            let (rows, sum) = try storeStep { () throws(StoreError) in try target.reading { db throws(StoreError) in try tally(db, table) } }
            if rows != read[table.name]?.rows || sum != read[table.name]?.sum { mismatched.append(table.name) }
            report.append(.init(name: table.name, rows: rows))
            progress(report[report.count - 1])
        }
        guard mismatched.isEmpty else {
            throw DatabaseCopyError(.verificationFailed, "the target's rows differ from the source's in: \(mismatched.joined(separator: ", ")); do not use it")
        }
        var changed: [String] = []
        for table in tables {
            let now = try storeStep { () throws(StoreError) in try source.reading { db throws(StoreError) in try tally(db, table) } }
            if now.rows != read[table.name]?.rows || now.sum != read[table.name]?.sum { changed.append(table.name) }
        }
        return DatabaseCopyReport(schemaVersion: version, tables: report, changedSince: changed)
    }

    /// Runs a step of store calls, naming a failure as a copy's.
    func storeStep<T>(_ body: () throws(StoreError) -> T) throws(DatabaseCopyError) -> T {
        do {
            return try body()
        } catch {
            throw DatabaseCopyError(.database, "\(error.code.rawValue): \(error.detail)")
        }
    }

    /// Both databases' schema versions and tables, which must agree.
    func checkedShapes() throws(DatabaseCopyError) -> (version: Int, tables: [CopiedTableShape]) {
        let (fromVersions, fromTables) = try storeStep { () throws(StoreError) in
            (try source.schemaVersions(), try source.reading { db throws(StoreError) in try Self.shapes(db, backend: source.backend) })
        }
        let (toVersions, toTables) = try storeStep { () throws(StoreError) in
            (try target.schemaVersions(), try target.reading { db throws(StoreError) in try Self.shapes(db, backend: target.backend) })
        }
        guard fromVersions == toVersions else {
            throw DatabaseCopyError(.schemaDiffers, "the source is at schema \(fromVersions.last ?? 0), the target at \(toVersions.last ?? 0); copy with the signet release that wrote the source")
        }
        guard fromTables == toTables else {
            let names = Set(fromTables.filter { !toTables.contains($0) }.map { $0.name }).union(toTables.filter { !fromTables.contains($0) }.map { $0.name })
            throw DatabaseCopyError(.schemaDiffers, "the two databases' tables or columns differ (\(names.sorted().joined(separator: ", "))); was one changed by hand?")
        }
        for table in fromTables where table.key.isEmpty {
            throw DatabaseCopyError(.schemaDiffers, "table \(table.name) has no primary key to read it in order by")
        }
        return (fromVersions.last ?? 0, fromTables)
    }

    /// The tables (without `schema_migrations`, which opening the target wrote), `users` first:
    /// every foreign key refers to it.
    static func shapes(_ db: any SQLSession, backend: String) throws(StoreError) -> [CopiedTableShape] {
        let postgres = backend == "postgres"
        let names = try db.query(postgres
            ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").compactMap { $0[0].text }
        var shapes: [CopiedTableShape] = []
        for name in names where name != "schema_migrations" {
            let columns: [String], key: [String]
            if postgres {
                columns = try db.query("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?", [.text(name)])
                    .compactMap { $0[0].text }
                key = try db.query("""
                    SELECT k.column_name FROM information_schema.table_constraints t JOIN information_schema.key_column_usage k
                    ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema AND k.table_name = t.table_name
                    WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = current_schema() AND t.table_name = ? ORDER BY k.ordinal_position
                    """, [.text(name)]).compactMap { $0[0].text }
            } else {
                let info = try db.query("SELECT name, pk FROM pragma_table_info(?)", [.text(name)])
                columns = info.compactMap { $0[0].text }
                key = info.filter { ($0[1].int ?? 0) > 0 }.sorted { ($0[1].int ?? 0) < ($1[1].int ?? 0) }.compactMap { $0[0].text }
            }
            shapes.append(CopiedTableShape(name: name, columns: columns.sorted(), key: key))
        }
        // Tables others refer to first, so that each row's foreign keys find theirs.
        let parents = ["users": 0, "roles": 1]
        return shapes.sorted { (parents[$0.name] ?? 2, $0.name) < (parents[$1.name] ?? 2, $1.name) }
    }

    /// Each table of `tables` that holds rows, with their number.
    func rowsHeld(_ db: any SQLSession, _ tables: [CopiedTableShape]) throws(StoreError) -> [String] {
        var held: [String] = []
        for table in tables {
            let count = try db.query("SELECT COUNT(*) FROM \(table.name)").first?[0].int ?? 0
            if count > 0 { held.append("\(table.name) \(count)") }
        }
        return held
    }

    /// Reads `table` a page at a time in primary-key order (each page after the last key read).
    func scan(_ db: any SQLSession, _ table: CopiedTableShape, _ each: ([[SQLValue]]) throws(StoreError) -> Void) throws(StoreError) {
        let columns = table.columns.joined(separator: ", ")
        let key = "(" + table.key.joined(separator: ", ") + ")"
        let order = table.key.joined(separator: ", ")
        let first = "SELECT \(columns) FROM \(table.name) ORDER BY \(order) LIMIT \(Self.page)"
        let next = "SELECT \(columns) FROM \(table.name) WHERE \(key) > (\(table.key.map { _ in "?" }.joined(separator: ", "))) ORDER BY \(order) LIMIT \(Self.page)"
        let keyIndexes = table.key.compactMap { table.columns.firstIndex(of: $0) }
        var after: [SQLValue]?
        while true {
            let rows = if let after { try db.query(next, after) } else { try db.query(first) }
            if rows.isEmpty { return }
            try each(rows)
            if rows.count < Self.page { return }
            after = keyIndexes.map { rows[rows.count - 1][$0] }
        }
    }

    /// A table's rows and digest sum as the database holds them now.
    func tally(_ db: any SQLSession, _ table: CopiedTableShape) throws(StoreError) -> (rows: Int, sum: RowSum) {
        var rows = 0
        var sum = RowSum()
        try scan(db, table) { (page: [[SQLValue]]) throws(StoreError) in
            for row in page { sum.add(digest(Self.encoded(row))) }
            rows += page.count
        }
        return (rows, sum)
    }

    /// PostgreSQL: each column filled from a sequence (`BIGSERIAL`) continues after the largest
    /// copied value, so the next row a server adds does not collide with a copied one.
    func advanceSequences(_ db: any SQLSession, _ tables: [CopiedTableShape]) throws(StoreError) {
        for table in tables {
            let serial = try db.query("""
                SELECT column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? AND column_default LIKE 'nextval(%'
                """, [.text(table.name)]).compactMap { $0[0].text }
            for column in serial {
                try db.query("SELECT setval(pg_get_serial_sequence(?, ?), COALESCE(MAX(\(column)), 1), MAX(\(column)) IS NOT NULL) FROM \(table.name)",
                             [.text(table.name), .text(column)])
            }
        }
    }

    /// One row as bytes: per column a tag, then the value (integers as 8 bytes big-endian, text
    /// and bytes after their length), so that two rows encode alike only if they are alike.
    static func encoded(_ row: [SQLValue]) -> [UInt8] {
        var out: [UInt8] = []
        func append(_ n: Int64) { out += withUnsafeBytes(of: n.bigEndian, Array.init) }
        for value in row {
            switch value {
            case .null: out.append(0)
            case .int(let v): out.append(1); append(v)
            case .text(let v): out.append(2); append(Int64(v.utf8.count)); out += v.utf8
            case .blob(let v): out.append(3); append(Int64(v.count)); out += v
            }
        }
        return out
    }

    /// Inserts rows into one table, many to a statement.
    struct Inserter {
        let table: CopiedTableShape
        let session: any SQLSession

        /// Rows to a statement, within SQLite's and libpq's limits on parameters.
        var batch: Int { max(1, 900 / max(table.columns.count, 1)) }

        func statement(_ rows: Int) -> String {
            let one = "(" + table.columns.map { _ in "?" }.joined(separator: ", ") + ")"
            return "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES "
                + Array(repeating: one, count: rows).joined(separator: ", ")
        }

        func rows(_ rows: [[SQLValue]]) throws(StoreError) {
            var start = 0
            while start < rows.count {
                let end = min(start + batch, rows.count)
                try session.query(statement(end - start), Array(rows[start..<end].joined()))
                start = end
            }
        }
    }
}

/// A sum of 256-bit digests modulo 2²⁵⁶: the same for the same rows in any order.
struct RowSum: Equatable {
    private var limbs: [UInt64] = [0, 0, 0, 0]

    mutating func add(_ digest: [UInt8]) {
        var carry: UInt64 = 0
        for i in 0..<4 {
            var limb: UInt64 = 0
            for byte in digest.dropFirst(i * 8).prefix(8) { limb = limb << 8 | UInt64(byte) }
            let (partial, overflow1) = limbs[i].addingReportingOverflow(limb)
            let (total, overflow2) = partial.addingReportingOverflow(carry)
            limbs[i] = total
            carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
    }
}
