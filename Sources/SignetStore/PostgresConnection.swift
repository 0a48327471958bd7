import SignetAuth
internal import CPostgres
import Foundation

/// One libpq connection (`PGconn*`) with its prepared statements. Not thread-safe by itself: the
/// pool hands it to one caller at a time.
final class PostgresConnection: SQLSession {
    private var conn: OpaquePointer?
    private let conninfo: String
    private var prepared: [String: String] = [:]
    private(set) var changes = 0

    init(url: String) throws(StoreError) {
        conninfo = url
        try connect()
    }

    deinit { PQfinish(conn) }

    private func connect() throws(StoreError) {
        PQfinish(conn)
        prepared = [:]
        conn = PQconnectdb(conninfo)
        guard let conn, signet_pq_connection_ok(conn) != 0 else {
            let message = conn.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            throw StoreError(.unavailable, "cannot connect to PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        // libpq prints a server's notices to standard error as they come, outside the log's
        // format: every start on a migrated database printed that `schema_migrations` exists.
        // Warnings and errors still come.
        PQclear(PQexec(conn, "SET client_min_messages = warning"))
    }

    /// Whether libpq considers the connection usable.
    var isConnected: Bool { conn.map { signet_pq_connection_ok($0) != 0 } ?? false }

    /// Whether the connection is usable; a broken one is reset (once).
    func ensureConnected() throws(StoreError) {
        if let conn, signet_pq_connection_ok(conn) != 0 { return }
        try connect()
    }

    /// `?` placeholders to PostgreSQL's `$1, $2, ...` (no statement here has a `?` in a literal).
    static func numbered(_ sql: String) -> String {
        var out = ""
        var n = 0
        for c in sql {
            if c == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(c)
            }
        }
        return out
    }

    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [[SQLValue]] {
        guard let conn else { throw StoreError(.unavailable, "not connected") }
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count)"
            let result = PQprepare(conn, name, Self.numbered(sql), Int32(parameters.count), nil)
            defer { PQclear(result) }
            try check(result, sql)
            prepared[sql] = name
        }
        // Text parameters, except bytea, which goes as its bytes (binary format, PostgreSQL 15
        // §55.7 Bind): no hex text to make here and parse there.
        let count = parameters.count
        let values = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: max(count, 1))
        let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: max(count, 1))
        let formats = UnsafeMutablePointer<Int32>.allocate(capacity: max(count, 1))
        defer {
            for i in 0..<count { free(values[i]) }
            values.deallocate()
            lengths.deallocate()
            formats.deallocate()
        }
        for (i, value) in parameters.enumerated() {
            (lengths[i], formats[i]) = (0, 0)
            switch value {
            case .int(let v): values[i] = strdup(String(v))
            case .text(let v): values[i] = strdup(v)
            case .blob(let v):
                let bytes = malloc(max(v.count, 1))!.assumingMemoryBound(to: CChar.self)
                v.withUnsafeBytes { if let base = $0.baseAddress { memcpy(bytes, base, v.count) } }
                (values[i], lengths[i], formats[i]) = (bytes, Int32(v.count), 1)
            case .null: values[i] = nil
            }
        }
        let result: OpaquePointer? = values.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(count, 1)) { values in
            PQexecPrepared(conn, name, Int32(count), values, lengths, formats, 0)
        }
        defer { PQclear(result) }
        try check(result, sql)
        changes = Int(String(cString: PQcmdTuples(result))) ?? 0
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for r in 0..<rowCount {
            var row: [SQLValue] = []
            for c in 0..<columnCount {
                if PQgetisnull(result, r, c) == 1 {
                    row.append(.null)
                    continue
                }
                let text = String(cString: PQgetvalue(result, r, c))
                switch PQftype(result, c) {
                case 17: row.append(.blob(Self.unhex(text)))  // bytea
                case 20, 21, 23: row.append(.int(Int64(text) ?? 0))  // int8, int2, int4
                case 16: row.append(.int(text == "t" ? 1 : 0))  // bool
                default: row.append(.text(text))
                }
            }
            rows.append(row)
        }
        return rows
    }

    static func unhex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8.dropFirst(2))
        bytes.reserveCapacity(utf8.count / 2)
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
        var i = 0
        while i + 1 < utf8.count {
            bytes.append(nibble(utf8[i]) << 4 | nibble(utf8[i + 1]))
            i += 2
        }
        return bytes
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws(StoreError) {
        guard let result else { throw StoreError(.unavailable, "PostgreSQL gave no result (connection lost)") }
        guard signet_pq_result_ok(result) == 0 else { return }
        let state = signet_pq_sqlstate(result).map { String(cString: $0) } ?? ""
        let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        if let conn, signet_pq_connection_ok(conn) == 0 { throw StoreError(.unavailable, "PostgreSQL connection lost: \(message)") }
        switch state {
        case "23505", "23503": throw StoreError(.conflict, message)  // unique or foreign-key violation
        case "53100": throw StoreError(.storageFull, message)  // disk_full
        case _ where state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53"):
            throw StoreError(.unavailable, message)  // connection, operator intervention, resources
        default: throw StoreError(.internalError, "\(state): \(message)")
        }
    }

    var beginStatement: String { "BEGIN" }
    var inTransaction: Bool { false }
    func beginBatchIfBatching() throws(StoreError) {}

    func lockForTransaction(_ key: String) throws(StoreError) {
        try query("SELECT pg_advisory_xact_lock(hashtext(?))", [.text(key)])
    }
}
