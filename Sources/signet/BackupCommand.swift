import Foundation
import SignetAuth
import SignetServer
import SignetStore

/// `signet backup --to FILE`: a consistent, checked copy of a SQLite database, also while
/// servers write to it; PostgreSQL has its own tool for this.
enum BackupCommand {
    /// What `backup` and `copy` take: the database (by `--config` or `--database`), where to
    /// (`--to`), and `--json`; anything else, or no `--to`, is a ``UsageProblem``.
    struct Options {
        var config: String?
        var database: String?
        var target = ""
        var json = false
        var seal = false

        init(_ args: [String]) throws(UsageProblem) {
            var words = CommandWords(args)
            var target: String?
            while let flag = words.next() {
                switch flag {
                case "--config": config = try words.value(of: flag)
                case "--database": database = try words.value(of: flag)
                case "--to": target = try words.value(of: flag)
                case "--json": json = true
                case "--seal": seal = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard let target else { throw UsageProblem.missing("--to") }
            self.target = target
        }
    }

    static func run(_ args: [String]) -> Int32 {
        let options: Options
        do {
            options = try Options(args)
        } catch {
            return usageError("usage: signet backup --to FILE [--seal] [--config signet.json | --database sqlite:PATH] [--json]", error)
        }
        let (config, database, target, json) = (options.config, options.database, options.target, options.json)
        do {
            let configuration = try ConfigurationLoader.load(file: config, environment: ProcessInfo.processInfo.environment, database: database)
            guard configuration.database.hasPrefix("sqlite:") else {
                FileHandle.standardError.write(Data("""
                    signet backup: the database is PostgreSQL; back it up with PostgreSQL's own tools, e.g.
                      pg_dump --format=custom --file=signet.dump "$DATABASE_URL"
                    (restore with pg_restore), or continuous archiving for point-in-time recovery. Keep the KEK apart from the dump.

                    """.utf8))
                return 2
            }
            // Sealed under the key a restore of the copy needs anyway: the one that opens its signing keys.
            let opening = openingKEK(configuration)
            let key = opening.map(KeyEncryptionKey.id)
            if options.seal, opening == nil {
                FileHandle.standardError.write(Data("signet backup: --seal seals under the key-encryption key that opens the database's signing keys, and none configured does (SIGNET_KEK or \(configuration.keyEncryptionKeyFile))\n".utf8))
                return 2
            }
            let kek = options.seal ? opening : nil
            let report = try SQLiteBackup.copy(from: String(configuration.database.dropFirst("sqlite:".count)), to: target, sealing: kek)
            if json {
                struct Output: Encodable {
                    let path: String, bytes: Int, pages: Int, users: Int, schema_version: Int, integrity: String, seconds: Double, key_encryption_key: String?
                    let sealed: Bool
                }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(Output(path: report.path, bytes: report.bytes, pages: report.pages, users: report.users,
                                                                 schema_version: report.schemaVersion, integrity: "ok", seconds: report.seconds,
                                                                 key_encryption_key: key, sealed: kek != nil)), as: UTF8.self))
            } else {
                print("backed up to \(report.path): \(report.bytes) bytes, \(report.users) user(s), schema \(report.schemaVersion), integrity ok, in \(String(format: "%.2f", report.seconds)) s"
                      + (kek == nil ? "" : "; sealed (AES-256-GCM) under key-encryption key \(key ?? "")"))
                let under = key.map { "; its keys are sealed under key-encryption key \($0), which a restore needs" } ?? ""
                print("the key-encryption key is not in the copy: keep \(configuration.keyEncryptionKeyFile) (or SIGNET_KEK) safe, apart from it\(under)")
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("signet backup: \(error)\n".utf8))
            return 1
        }
    }

    /// The ID (``KeyEncryptionKey/id(_:)``) of the configured key-encryption key when it opens
    /// the database's signing key: the key a restore of the copy needs (after `signet keys
    /// rekey`, an older copy needs an older key). `nil` when there is none or it does not open
    /// them; nothing is made or written.
    static func keyID(_ configuration: ServerConfiguration) -> String? {
        openingKEK(configuration).map(KeyEncryptionKey.id)
    }

    /// The configured key-encryption key when it opens the database's signing keys (what
    /// ``keyID(_:)`` names); `nil` otherwise.
    static func openingKEK(_ configuration: ServerConfiguration) -> [UInt8]? {
        guard let kek = try? configuredKEK(configuration),
              let store = try? SignetApp.openStore(configuration.database, connections: 1, existing: true),
              (try? store.signingKeys().isEmpty) == false,
              (try? KeyEncryptionKey.keptKeys(store: store, kek: kek)) != nil,
              (try? KeyRing(store: store, kek: kek, retentionSeconds: 0)) != nil
        else { return nil }
        return kek
    }

    /// The configured key-encryption key (`SIGNET_KEK`, else its file), or `nil` when neither
    /// is there: nothing is made.
    static func configuredKEK(_ configuration: ServerConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [UInt8]? {
        guard environment["SIGNET_KEK"] != nil || FileManager.default.fileExists(atPath: configuration.keyEncryptionKeyFile) else { return nil }
        return try KeyEncryptionKey.load(environment: environment, file: configuration.keyEncryptionKeyFile)
    }
}
