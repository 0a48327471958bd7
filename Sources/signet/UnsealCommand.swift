import Foundation
import SignetAuth
import SignetServer
import SignetStore
import SignetWebAuthn

/// `signet unseal COPY --to FILE`: a sealed copy (a scheduled one, or `signet backup --seal`'s)
/// opened with the configured key-encryption key into a plain SQLite file, to read with
/// `sqlite3` or to hand to a tool that needs one. The file is new, mode 0600, and checked as a
/// restore checks a copy; what was sealed stays as it is.
///
/// Exit codes: 0 opened; 2 refused, nothing written (usage, no key configured, a copy sealed
/// under another key, one that is not a sealed copy or was altered, a file at `--to`); 1 a
/// failure while writing.
enum UnsealCommand {
    static let usage = "usage: signet unseal COPY --to FILE [--config signet.json] [--json]"

    static func run(_ args: [String]) -> Int32 {
        var (config, given, json): (String?, String?, Bool) = (nil, nil, false)
        var words = CommandWords(args.dropFirst())
        let copy: String, target: String
        do {
            guard let first = args.first, !first.hasPrefix("-") else { throw UsageProblem("the sealed copy comes first") }
            copy = first
            while let flag = words.next() {
                switch flag {
                case "--config": config = try words.value(of: flag)
                case "--to": given = try words.value(of: flag)
                case "--json": json = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            target = try required(given, else: .missing("--to"))
        } catch {
            return usageError(usage, error)
        }
        guard FileManager.default.isReadableFile(atPath: copy) else { return failed("cannot read \(copy): no such file, or not readable", status: 2) }
        let configuration: ServerConfiguration
        let kek: [UInt8]
        do {
            configuration = try ConfigurationLoader.load(file: config, environment: ProcessInfo.processInfo.environment)
            guard SealedBackup.isSealed(copy) else { return failed("\(copy) is not a sealed copy (a plain one opens with sqlite3 as it is)", status: 2) }
            guard let configured = try BackupCommand.configuredKEK(configuration) else {
                return failed("\(copy) is sealed under key-encryption key \(try SealedBackup.keyID(copy)); give that key (SIGNET_KEK or key_encryption_key_file)", status: 2)
            }
            kek = configured
        } catch {
            return failed("\(error)", status: 2)
        }
        let report: BackupReport
        do throws(StoreError) {
            try SealedBackup.open(copy, to: target, kek: kek)
        } catch {
            return failed(error.detail, status: error.code == .storageFull ? 1 : 2)
        }
        do throws(StoreError) {
            report = try SQLiteBackup.inspect(target)
        } catch {
            CopyCommand.removeNewFile(target)
            return failed("the copy opened, but what it held is not a whole Signet database: \(error.detail)", status: 1)
        }
        if json {
            print(JSONValue.object([
                "from": .string(copy), "path": .string(target), "users": .int(Int64(report.users)), "schema_version": .int(Int64(report.schemaVersion)),
                "bytes": .int(Int64(report.bytes)), "integrity": .string("ok"), "key_encryption_key": .string(KeyEncryptionKey.id(kek)),
            ]).serialized)
        } else {
            print("unsealed \(copy) to \(target): \(report.bytes) bytes, \(report.users) user(s), schema \(report.schemaVersion), integrity ok")
            print("\(target) is readable by you only and holds every account of the copy: remove it when done")
        }
        return 0
    }

    static func failed(_ message: String, status: Int32) -> Int32 {
        FileHandle.standardError.write(Data("signet unseal: \(message)\n".utf8))
        return status
    }
}
