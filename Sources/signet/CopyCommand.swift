import Foundation
import SignetAuth
import SignetCrypto
import SignetServer
import SignetStore

/// `signet copy --to DATABASE`: every row of the configured database into a new, empty one, on
/// either kind (SQLite to PostgreSQL when a deployment outgrows one machine, PostgreSQL to a
/// SQLite file to keep or to test against), then read back and checked
/// (``SignetStore/SQLStore/copy(into:digest:progress:)``).
///
/// Exit codes: 0 copied and checked; 1 a failure (nothing usable was made); 2 refused (usage, a
/// target that exists or holds rows, schemas that differ); 3 copied and checked, but the source
/// changed after the copy began, so it lacks those changes.
enum CopyCommand {
    static let usage = "usage: signet copy --to sqlite:PATH|postgres://... [--config signet.json | --database URL] [--json]"

    static func run(_ args: [String]) -> Int32 {
        let options: BackupCommand.Options
        do {
            options = try BackupCommand.Options(args)
            guard !options.seal else { throw UsageProblem("--seal is backup's: a copy is a working database") }
            let target = options.target
            guard target.hasPrefix("sqlite:") || target.hasPrefix("postgres://") || target.hasPrefix("postgresql://") else {
                throw UsageProblem("--to takes a database URL, sqlite:PATH or postgres://..., not \"\(target)\"")
            }
        } catch {
            return usageError(usage, error)
        }
        let (config, database, target, json) = (options.config, options.database, options.target, options.json)
        let configuration: ServerConfiguration
        do {
            configuration = try ConfigurationLoader.load(file: config, environment: ProcessInfo.processInfo.environment, database: database)
        } catch {
            return failed("\(error)", status: 2)
        }
        let source = configuration.database
        // A SQLite target is a new file, never someone's database migrated in place; a copy that
        // fails removes it, so the same command can be run again.
        let newFile = target.hasPrefix("sqlite:") ? String(target.dropFirst("sqlite:".count)) : nil
        if let newFile, FileManager.default.fileExists(atPath: newFile) {
            return failed("\(newFile) exists; give a new file name", status: 2)
        }
        if source.hasPrefix("sqlite:"), !FileManager.default.fileExists(atPath: String(source.dropFirst("sqlite:".count))) {
            return failed("there is no SQLite database at \(source.dropFirst("sqlite:".count))", status: 2)
        }
        guard source != target else { return failed("the source and the target are one database", status: 2) }
        let start = Date()
        let report: DatabaseCopyReport
        do {
            guard let from = try SignetApp.openStore(source, connections: 2) as? SQLStore,
                  let to = try SignetApp.openStore(target, connections: 2) as? SQLStore
            else { return failed("not a SQL database", status: 1) }
            report = try from.copy(into: to, digest: { Digest.sha256.hash($0) }) { table in
                if !json { print("  \(table.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(table.rows)") }
            }
        } catch let error as DatabaseCopyError {
            removeNewFile(newFile)
            let refused: Set<DatabaseCopyError.Code> = [.targetNotEmpty, .schemaDiffers, .sameDatabase]
            return failed(error.detail, status: refused.contains(error.code) ? 2 : 1)
        } catch {
            removeNewFile(newFile)
            return failed("\(error)", status: 1)
        }
        let seconds = Date().timeIntervalSince(start)
        let key = BackupCommand.keyID(configuration)
        if json {
            struct Output: Encodable {
                struct Table: Encodable { let name: String, rows: Int }
                let source: String, target: String, schema_version: Int, tables: [Table], rows: Int, verified: Bool
                let changed_since: [String], seconds: Double, key_encryption_key: String?
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let output = Output(source: redacted(source), target: redacted(target), schema_version: report.schemaVersion,
                                tables: report.tables.map { .init(name: $0.name, rows: $0.rows) }, rows: report.rows, verified: true,
                                changed_since: report.changedSince, seconds: seconds, key_encryption_key: key)
            print(String(decoding: (try? encoder.encode(output)) ?? Data(), as: UTF8.self))
        } else {
            print("copied \(redacted(source)) to \(redacted(target)): \(report.rows) row(s) in \(report.tables.count) tables, schema \(report.schemaVersion), "
                  + "each table read back and checked, in \(String(format: "%.2f", seconds)) s")
            let under = key.map { ", ID \($0)" } ?? ""
            print("the signing keys and queued mail stay sealed: a server on the copy needs the same key-encryption key\(under)")
        }
        guard report.changedSince.isEmpty else {
            FileHandle.standardError.write(Data("""
                signet copy: the source changed while it was copied (\(report.changedSince.joined(separator: ", "))); the copy holds the database as it was \
                when the copy began. Stop every server on the source, and copy again into a new database.

                """.utf8))
            return 3
        }
        return 0
    }

    static func failed(_ message: String, status: Int32) -> Int32 {
        FileHandle.standardError.write(Data("signet copy: \(message)\n".utf8))
        return status
    }

    static func removeNewFile(_ path: String?) {
        guard let path else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
