import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetStore

/// `signet restore --from FILE`: a copy `signet backup` made put back in the configured SQLite
/// database's place (``SignetStore/SQLiteRestore``), with the servers stopped. Before anything
/// is replaced the copy is checked whole, at a schema this build knows, and opened as a server
/// would open it: upgraded to this build's schema, its signing keys opened with the configured
/// key-encryption key. The database it replaces is kept beside it, whole. `--from` a folder
/// takes its newest scheduled copy (`backup.directory`); `--check` does every check on a
/// copy of its own, also while servers run, and changes nothing.
///
/// Exit codes: 0 restored; 1 a failure while putting it in place; 2 refused, nothing changed
/// (usage, PostgreSQL, a server still running, a copy that is not whole, not Signet's, from a
/// newer release, or sealed under another key).
enum RestoreCommand {
    static let usage = "usage: signet restore --from FILE|DIR [--check] [--config signet.json | --database sqlite:PATH] [--json]"

    static func run(_ args: [String]) -> Int32 {
        var words = CommandWords(args)
        var (config, database, given, json, checkOnly): (String?, String?, String?, Bool, Bool) = (nil, nil, nil, false, false)
        let from: String
        do {
            while let flag = words.next() {
                switch flag {
                case "--config": config = try words.value(of: flag)
                case "--database": database = try words.value(of: flag)
                case "--from": given = try words.value(of: flag)
                case "--json": json = true
                case "--check": checkOnly = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            from = try required(given, else: .missing("--from"))
        } catch {
            return usageError(usage, error)
        }
        // A folder of scheduled copies (backup.directory): its newest.
        var isFolder: ObjCBool = false
        var copy = from
        if FileManager.default.fileExists(atPath: from, isDirectory: &isFolder), isFolder.boolValue {
            guard let newest = ScheduledBackup.copies(in: from).last else {
                return failed("no scheduled copy (signet-YYYYMMDDTHHMMSSZ.db or .db.sealed) in \(from)", status: 2)
            }
            copy = (from as NSString).appendingPathComponent(newest)
        }
        guard FileManager.default.fileExists(atPath: copy) else { return failed("there is no copy at \(copy): check --from", status: 2) }
        let environment = ProcessInfo.processInfo.environment
        let configuration: ServerConfiguration
        do {
            configuration = try ConfigurationLoader.load(file: config, environment: environment, database: database)
        } catch {
            return failed("\(error)", status: 2)
        }
        guard configuration.database.hasPrefix("sqlite:") else {
            return failed("""
                the database is PostgreSQL; restore a pg_dump with PostgreSQL's own tool, e.g.
                  pg_restore --clean --if-exists --dbname="$DATABASE_URL" signet.dump
                with every server stopped, then start them with the key-encryption key the dump was made under.
                """, status: 2)
        }
        let target = String(configuration.database.dropFirst("sqlite:".count))
        let start = Date()
        let read: BackupReport
        // A check alone works on a copy of its own, beside nothing a server uses.
        let staged = checkOnly ? NSTemporaryDirectory() + "/signet-check-\(UUID().uuidString).db" : SQLiteRestore.staging(target)
        var found: Findings
        do {
            // Read first: the database the copy replaces says which signing keys are gone.
            let current = SQLiteRestore.signingKeyIDs(target)
            let accounts = SQLiteRestore.userIDs(target)
            // A sealed copy opens with the configured key-encryption key, or is refused naming its own.
            let kek = SealedBackup.isSealed(copy) ? try BackupCommand.configuredKEK(configuration) : nil
            read = try SQLiteRestore.stage(copy: copy, target: checkOnly ? nil : target, into: staged, kek: kek)
            found = try openedAsAServerWould(staged, configuration: configuration, environment: environment, current: current)
            found.sealed = kek != nil
            // Accounts of the database it replaces that the copy lacks (made since it).
            if let accounts, let copied = SQLiteRestore.userIDs(staged) { found.accountsOnlyReplaced = accounts.subtracting(copied).count }
        } catch {
            CopyCommand.removeNewFile(staged)
            return failed("\(error)", status: 2)
        }
        if checkOnly {
            CopyCommand.removeNewFile(staged)
            return report(json: json, checked: true, copy: copy, target: target, read: read, kept: nil, found: found, seconds: Date().timeIntervalSince(start))
        }
        let stamp = ScheduledBackup.stamp(at: Int64(Date().timeIntervalSince1970 * 1000))
        let kept: String?
        do {
            kept = try SQLiteRestore.swap(staged: staged, target: target, stamp: stamp)
        } catch {
            CopyCommand.removeNewFile(staged)
            return failed("\(error)", status: error.code == .unavailable ? 2 : 1)
        }
        return report(json: json, checked: false, copy: copy, target: target, read: read, kept: kept, found: found, seconds: Date().timeIntervalSince(start))
    }

    /// What was restored (or, `checked`, would be), as a line or as JSON.
    static func report(json: Bool, checked: Bool, copy: String, target: String, read: BackupReport, kept: String?, found: Findings, seconds: Double) -> Int32 {
        if json {
            struct Output: Encodable {
                let from: String, path: String, users: Int, copy_schema_version: Int, schema_version: Int, integrity: String
                let replaced: String?, key_encryption_key: String?, seconds: Double, restored: Bool
                let signing_keys_dropped: [String], signing_key_added: String?, accounts_not_in_copy: Int?, sealed: Bool
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let output = Output(from: copy, path: target, users: read.users, copy_schema_version: read.schemaVersion, schema_version: SQLStore.knownSchemaVersion,
                                integrity: "ok", replaced: kept, key_encryption_key: found.kek, seconds: seconds, restored: !checked,
                                signing_keys_dropped: found.dropped, signing_key_added: found.added, accounts_not_in_copy: found.accountsOnlyReplaced,
                                sealed: found.sealed)
            print(String(decoding: (try? encoder.encode(output)) ?? Data(), as: UTF8.self))
            return 0
        }
        let upgraded = read.schemaVersion < SQLStore.knownSchemaVersion ? " (upgraded from \(read.schemaVersion))" : ""
        let done = checked ? "checked \(copy): it would restore to \(target) with" : "restored \(copy) to \(target):"
        print("\(done) \(read.users) user(s), schema \(SQLStore.knownSchemaVersion)\(upgraded), integrity ok, in \(String(format: "%.2f", seconds)) s")
        if let kept { print("the database it replaced is kept whole at \(kept): remove it once the restore is confirmed") }
        if found.sealed { print("the copy was sealed, and opened with the key-encryption key configured") }
        if let key = found.kek { print("its signing keys open with key-encryption key \(key), the one configured") }
        if !found.dropped.isEmpty {
            print("signing keys gone from the database it replaces (revoked or destroyed since the copy), \(checked ? "to be " : "")left out: \(found.dropped.joined(separator: ", "))")
        }
        if let added = found.added { print("no key of the copy's that signs is left, so a new one \(checked ? "would sign" : "signs"): \(added)") }
        if let missing = found.accountsOnlyReplaced, missing > 0 {
            print("\(missing) account(s) of the database it replaces \(checked ? "are" : "were") not in the copy (made since): signet admin users export --all from "
                  + "\(kept ?? "it") and users import bring them back (README, Backups)")
        }
        if checked { print("nothing was changed") }
        return 0
    }

    /// What a restore found and did: the key-encryption key that opens the copy's signing keys
    /// (`nil` when it holds none), the keys left out, a key added, and the accounts of the
    /// replaced database the copy lacks.
    struct Findings {
        /// Whether the copy was sealed (``SealedBackup``).
        var sealed = false
        var kek: String?
        var dropped: [String] = []
        var added: String?
        /// Accounts of the database replaced that the copy lacks; `nil` when none was read.
        var accountsOnlyReplaced: Int?
    }

    /// Opens the staged copy as `signet serve` would (which upgrades it to this build's schema)
    /// and, when it holds signing keys, opens them with the configured key-encryption key.
    /// Throws what a start would fail with.
    ///
    /// Then, with `current` (the `kid`s the replaced database holds), every key of the copy's
    /// that is gone from it is deleted from the copy, each with a `signing_key_revoked` row: a
    /// key revoked after the copy was made (one that may be in other hands) must not sign
    /// again. When none of the copy's keys never retired is left, a new one is added first
    /// (`signing_key_rotated`) and signs at once.
    static func openedAsAServerWould(_ staged: String, configuration: ServerConfiguration, environment: [String: String], current: Set<String>?) throws -> Findings {
        let store = try SQLStore(path: staged)
        let rows = try store.signingKeys()
        guard !rows.isEmpty else { return Findings() }
        let (kek, _) = try KeyEncryptionKey.load(for: store, environment: environment, file: configuration.keyEncryptionKeyFile)
        _ = try KeyRing(store: store, kek: kek, retentionSeconds: 0)
        var keys = Findings(kek: KeyEncryptionKey.id(kek))
        guard let current else { return keys }
        let gone = rows.filter { !current.contains($0.kid) }.map(\.kid).sorted()
        guard !gone.isEmpty else { return keys }
        let now = Date()
        let at = Int64(now.timeIntervalSince1970 * 1000)
        func event(_ kind: AuditKind, _ detail: String) -> StoreWrite { .audit(.byCommand(kind, at: at, detail: detail)) }
        if !rows.contains(where: { $0.retiredAt == nil && current.contains($0.kid) }) {
            keys.added = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: now, writes: { kid in
                [event(.signingKeyRotated, "kid \(kid), by signet restore: no key of the copy's that signs is in the database it replaces; signs at once")]
            })
        }
        for kid in gone where try store.revokeSigningKey(kid: kid, writes: [event(.signingKeyRevoked, "kid \(kid), by signet restore: gone from the database the copy replaces (revoked or destroyed since the copy)")]) {
            keys.dropped.append(kid)
        }
        return keys
    }

    static func failed(_ message: String, status: Int32) -> Int32 {
        FileHandle.standardError.write(Data("signet restore: \(message)\n".utf8))
        return status
    }
}
