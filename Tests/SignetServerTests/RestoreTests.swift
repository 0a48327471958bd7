import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetSoftware
import SignetStore
import SignetHTTP
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `signet restore` puts a backup back in a SQLite database's place, and `signet serve` refuses a
/// database that a newer Signet upgraded: each from the command line, against real processes.
@Suite struct RestoreTests {
    /// The command, with a temporary folder of the test's own (`TMPDIR`), where `--check` stages
    /// its copy: another test's checks never show in it.
    static func signet(_ arguments: [String], kek: String, in directory: URL) throws -> (status: Int32, output: String, errors: String) {
        let temporary = directory.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        return try runProcess(ProcessTests.binary.path, arguments, environment: ["SIGNET_KEK": kek, "TMPDIR": temporary.path + "/"], in: directory)
    }

    /// The bytes of `path` and of its WAL, to show a refused restore changed neither.
    static func state(_ path: String) -> [Data?] {
        [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
    }

    /// A new folder of the scratch directory's, which the test removes.
    static func folder(_ name: String) throws -> URL {
        let directory = Scratch.directory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func users(_ path: String) throws -> Set<String> {
        Set(try rawSQLite(path, "SELECT email FROM users"))
    }

    @Test("restore: refused while a server runs; after a kill -9, the copy is in place, the replaced database kept whole with what was in its WAL, and a server on it signs in the copy's accounts only")
    func restoreAfterCrash() throws {
        let directory = try Self.folder("restore")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("signet.db").path
        let cluster = try Cluster(instances: 1, database: "sqlite:" + path)
        let early = SoftwareAuthenticator(), late = SoftwareAuthenticator()
        _ = try cluster.signUp(early, email: "early@signet.test", on: 0)
        let copy = directory.appendingPathComponent("backup.db").path
        let backup = try Self.signet(["backup", "--to", copy, "--database", "sqlite:" + path], kek: cluster.kek, in: directory)
        #expect(backup.status == 0, "\(backup.errors)")
        _ = try cluster.signUp(late, email: "late@signet.test", on: 0)
        let restore = ["restore", "--from", copy, "--database", "sqlite:" + path, "--json"]

        // A server has the database open: refused, and nothing changed.
        // (Its bytes are the server's to change meanwhile: its checkpoints run on their own.)
        let running = try Self.signet(restore, kek: cluster.kek, in: directory)
        #expect(running.status == 2 && running.errors.contains("is open in another process"), "\(running.errors)")
        #expect(try Self.users(path) == ["early@signet.test", "late@signet.test"] && !FileManager.default.fileExists(atPath: SQLiteRestore.staging(path)))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: directory.path)).contains { $0.contains(".replaced-") })
        // A check alone is what a running server allows: every check, on a copy of its own, and nothing changed.
        let temporary = directory.appendingPathComponent("tmp").path
        let scratch = Set((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [])
        let checked = try Self.signet(restore + ["--check"], kek: cluster.kek, in: directory)
        #expect(checked.status == 0, "\(checked.errors)")
        let said = try OperationsTests.json(checked.output)
        #expect(said["restored"] == .bool(false) && said["users"] == .number("1") && said["replaced"] == nil && said["key_encryption_key"] != nil)
        #expect(said["accounts_not_in_copy"] == .number("1"), "\(said.serialized)")
        let human = try Self.signet(["restore", "--from", copy, "--check", "--database", "sqlite:" + path], kek: cluster.kek, in: directory)
        #expect(human.status == 0 && human.output.contains("checked \(copy): it would restore to \(path) with 1 user(s)") && human.output.contains("nothing was changed"), "\(human.output)")
        #expect(human.output.contains("1 account(s) of the database it replaces are not in the copy"), "\(human.output)")
        let strangerCheck = try Self.signet(restore + ["--check"], kek: Base64URL.encode(SecureRandom.bytes(32)), in: directory)
        #expect(strangerCheck.status == 2 && strangerCheck.errors.contains("key-encryption key"), "\(strangerCheck.errors)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: temporary)) == scratch)
        #expect(try Self.users(path) == ["early@signet.test", "late@signet.test"] && !FileManager.default.fileExists(atPath: SQLiteRestore.staging(path)))
        #expect(try cluster.signUp(SoftwareAuthenticator(), email: "still@signet.test", on: 0)["access_token"] != nil)

        // Killed: its last commits may be in the WAL alone.
        cluster.kill9(0)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let killed = Self.state(path)
        // Under another key-encryption key the copy's signing keys do not open: refused.
        let stranger = try Self.signet(restore, kek: Base64URL.encode(SecureRandom.bytes(32)), in: directory)
        #expect(stranger.status == 2 && stranger.errors.contains("key-encryption key"), "\(stranger.errors)")
        #expect(Self.state(path) == killed && !FileManager.default.fileExists(atPath: SQLiteRestore.staging(path)))
        #expect(try Self.users(path) == ["early@signet.test", "late@signet.test", "still@signet.test"])

        let done = try Self.signet(restore, kek: cluster.kek, in: directory)
        #expect(done.status == 0, "\(done.errors)")
        let report = try OperationsTests.json(done.output)
        #expect(report["users"] == .number("1") && report["integrity"] == .string("ok") && report["accounts_not_in_copy"] == .number("2"))
        #expect(report["schema_version"] == .number(String(SQLStore.knownSchemaVersion)) && report["copy_schema_version"] == .number(String(SQLStore.knownSchemaVersion)))
        #expect(report["key_encryption_key"] == .string(KeyEncryptionKey.id(Base64URL.decode(cluster.kek) ?? [])))
        let kept = try #require(report["replaced"]?.string)
        #expect(kept.hasPrefix(path + ".replaced-"))
        // The replaced database stands alone, whole, with every account it held (its WAL folded in).
        #expect(try rawSQLite(kept, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.users(kept) == ["early@signet.test", "late@signet.test", "still@signet.test"])
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: SQLiteRestore.staging(path)))
        // The copy itself was only read.
        #expect(try Self.users(copy) == ["early@signet.test"])

        try cluster.restart(0)
        #expect(try cluster.post(0, "/oauth/token", Self.grant(cluster, early)).status == 200)
        let gone = try cluster.post(0, "/oauth/token", Self.grant(cluster, late))
        #expect(gone.status == 400 && gone.json["reason"] == .string(Reason.credentialUnknown.rawValue), "\(gone.json.serialized)")
        // The restored file is the copy: a second restore keeps this one aside in turn.
        cluster.kill9(0)
        Thread.sleep(forTimeInterval: 1.1)
        let again = try Self.signet(restore, kek: cluster.kek, in: directory)
        #expect(again.status == 0, "\(again.errors)")
        let second = try #require(try OperationsTests.json(again.output)["replaced"]?.string)
        let (secondUsers, keptUsers) = (try Self.users(second), try Self.users(kept))
        #expect(second != kept && secondUsers == ["early@signet.test"] && keptUsers.count == 3)
        // Accounts made after the copy come back from the kept database, as the README says:
        // exported from it, imported into the restored one, with their IDs and passkeys.
        let exported = directory.appendingPathComponent("later.jsonl").path
        let export = try Self.signet(["admin", "users", "export", "--all", "--out", exported, "--database", "sqlite:" + kept], kek: cluster.kek, in: directory)
        #expect(export.status == 0, "\(export.errors)")
        let imported = try Self.signet(["admin", "users", "import", exported, "--json", "--database", "sqlite:" + path], kek: cluster.kek, in: directory)
        #expect(imported.status == 0, "\(imported.errors)")
        let outcomes = try OperationsTests.json(imported.output).array?.compactMap { row in row["email"]?.string.map { ($0, row["outcome"]?.string ?? "") } } ?? []
        #expect(Dictionary(uniqueKeysWithValues: outcomes) == ["early@signet.test": "exists", "late@signet.test": "made", "still@signet.test": "made"], "\(imported.output)")
        #expect(try Self.users(path) == ["early@signet.test", "late@signet.test", "still@signet.test"])
        let lateRow = try #require(try OperationsTests.json(imported.output).array?.first { $0["email"] == .string("late@signet.test") })
        #expect(lateRow["user_id"] != nil && lateRow["user_id"] == lateRow["source_user_id"] && lateRow["passkeys"] == .number("1"), "\(lateRow.serialized)")
        try cluster.restart(0)
        let back = try cluster.post(0, "/oauth/token", Self.grant(cluster, late))
        #expect(back.status == 200 && BackchannelLogoutTests.claims(back.json["access_token"]?.string)?["sub"] == lateRow["user_id"], "\(back.json.serialized)")
    }

    @Test("a signing key revoked after the copy was made stays out: the restore leaves it out of the copy, audited, and a new key signs at once")
    func revokedKeyStaysOut() throws {
        let directory = try Self.folder("restore-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("signet.db").path
        let database = ["--database", "sqlite:" + path]
        let cluster = try Cluster(instances: 1, database: "sqlite:" + path)
        let phone = SoftwareAuthenticator()
        _ = try cluster.signUp(phone, email: "keys@signet.test", on: 0)
        let first = try #require(try rawSQLite(path, "SELECT kid FROM signing_keys").first)
        let copy = directory.appendingPathComponent("backup.db").path
        #expect(try Self.signet(["backup", "--to", copy] + database, kek: cluster.kek, in: directory).status == 0)
        // After the copy: the key is replaced and revoked, as for a key in other hands.
        #expect(try Self.signet(["keys", "rotate"] + database, kek: cluster.kek, in: directory).status == 0)
        let revoked = try Self.signet(["keys", "revoke", first] + database, kek: cluster.kek, in: directory)
        #expect(revoked.status == 0, "\(revoked.errors)")
        let second = try #require(try rawSQLite(path, "SELECT kid FROM signing_keys").first)
        cluster.kill9(0)

        let restore = ["restore", "--from", copy, "--json"] + database
        let checked = try OperationsTests.json(try Self.signet(restore + ["--check"], kek: cluster.kek, in: directory).output)
        #expect(checked["signing_keys_dropped"] == .array([.string(first)]) && checked["signing_key_added"]?.string != nil, "\(checked.serialized)")
        #expect(try rawSQLite(path, "SELECT kid FROM signing_keys") == [second])
        let done = try Self.signet(restore, kek: cluster.kek, in: directory)
        #expect(done.status == 0, "\(done.errors)")
        let report = try OperationsTests.json(done.output)
        let added = try #require(report["signing_key_added"]?.string)
        #expect(report["signing_keys_dropped"] == .array([.string(first)]) && added != first && added != second)
        // The restored database: the copy's account, and only the new key.
        #expect(try rawSQLite(path, "SELECT kid FROM signing_keys") == [added])
        #expect(try Self.users(path) == ["keys@signet.test"])
        let audit = try rawSQLite(path, "SELECT kind || ' ' || detail FROM audit_events WHERE kind LIKE 'signing_key_%' ORDER BY id")
        #expect(audit.contains { $0.hasPrefix("signing_key_revoked kid \(first), by signet restore") } && audit.contains { $0.hasPrefix("signing_key_rotated kid \(added), by signet restore") },
                "\(audit)")
        try cluster.restart(0)
        let (status, tokens) = try cluster.post(0, "/oauth/token", Self.grant(cluster, phone))
        #expect(status == 200 && SigningKeyRotationTests().kid(tokens["access_token"]) == added, "\(tokens.serialized)")
        let jwks = try StrictJSON().parse(try HTTPClient(port: cluster.port(0)).send("GET", "/.well-known/jwks.json").body)
        #expect(jwks["keys"]?.array?.compactMap { $0["kid"]?.string } == [added])
    }

    /// A sign-in's token request for `authenticator`'s passkey.
    static func grant(_ cluster: Cluster, _ authenticator: SoftwareAuthenticator) throws -> JSONValue {
        let (session, credential) = try cluster.signInStart(authenticator, on: 0)
        return .object(["grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential])
    }

    @Test("restore refuses, changing nothing: no --from, PostgreSQL, a missing copy, one that is not a database, one torn, one without Signet's schema, one from a newer release")
    func refusals() throws {
        let directory = try Self.folder("restore")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("signet.db").path
        let kek = try {
            let cluster = try Cluster(instances: 1, database: "sqlite:" + path)
            _ = try cluster.signUp(SoftwareAuthenticator(), email: "kept@signet.test", on: 0)
            return cluster.kek
        }()
        let good = directory.appendingPathComponent("good.db").path
        #expect(try Self.signet(["backup", "--to", good, "--database", "sqlite:" + path], kek: kek, in: directory).status == 0)
        func file(_ name: String, _ make: (String) throws -> Void) rethrows -> String {
            let at = directory.appendingPathComponent(name).path
            try make(at)
            return at
        }
        let garbage = try file("garbage.db") { try Data(SecureRandom.bytes(8192)).write(to: URL(fileURLWithPath: $0)) }
        let torn = try file("torn.db") { at in
            var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
            // Past the first pages (the schema), into the tables' own.
            for i in stride(from: bytes.count / 2, to: bytes.count / 2 + 3000, by: 7) { bytes[i] ^= 0x5A }
            try bytes.write(to: URL(fileURLWithPath: at))
        }
        let foreign = try file("foreign.db") { _ = try rawSQLite($0, "CREATE TABLE notes (body TEXT)") }
        let newer = try file("newer.db") { at in
            try FileManager.default.copyItem(atPath: good, toPath: at)
            _ = try rawSQLite(at, "INSERT INTO schema_migrations VALUES (\(SQLStore.knownSchemaVersion + 1), 0)")
        }
        let cases: [(args: [String], says: String)] = [
            (["restore", "--database", "sqlite:" + path], "usage"),
            (["restore", "--from", good, "--database", "postgres://localhost/none"], "pg_restore"),
            (["restore", "--from", directory.appendingPathComponent("none.db").path, "--database", "sqlite:" + path], "there is no copy at"),
            (["restore", "--from", garbage, "--database", "sqlite:" + path], "not a database"),
            (["restore", "--from", torn, "--database", "sqlite:" + path], "integrity"),
            (["restore", "--from", foreign, "--database", "sqlite:" + path], "no Signet schema"),
            (["restore", "--from", newer, "--database", "sqlite:" + path], "schema_newer: the copy is at schema \(SQLStore.knownSchemaVersion + 1)"),
            (["restore", "--from", good, "--database", "sqlite:" + path, "--verbose"], "usage"),
        ]
        let before = Self.state(path)
        for (args, says) in cases {
            let result = try Self.signet(args, kek: kek, in: directory)
            #expect(result.status == 2 && result.errors.contains(says), "\(args): \(result.status) \(result.errors)")
            #expect(Self.state(path) == before && !FileManager.default.fileExists(atPath: SQLiteRestore.staging(path)), "\(args)")
        }
        #expect(try Self.users(path) == ["kept@signet.test"])
        // A folder of scheduled copies: its newest; one without any is refused.
        let folder = directory.appendingPathComponent("copies").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let empty = try Self.signet(["restore", "--from", folder, "--check", "--database", "sqlite:" + path], kek: kek, in: directory)
        #expect(empty.status == 2 && empty.errors.contains("no scheduled copy"), "\(empty.errors)")
        for name in ["signet-20261201T000000Z.db", "signet-20261203T000000Z.db", "signet-20261202T000000Z.db"] {
            try FileManager.default.copyItem(atPath: good, toPath: folder + "/" + name)
        }
        try FileManager.default.copyItem(atPath: garbage, toPath: folder + "/signet-newest.db")
        let newest = try Self.signet(["restore", "--from", folder, "--check", "--json", "--database", "sqlite:" + path], kek: kek, in: directory)
        #expect(newest.status == 0, "\(newest.errors)")
        #expect(try OperationsTests.json(newest.output)["from"] == .string(folder + "/signet-20261203T000000Z.db"))
        // Into a place where no database is yet: nothing is kept aside.
        let fresh = directory.appendingPathComponent("fresh.db").path
        let placed = try Self.signet(["restore", "--from", good, "--database", "sqlite:" + fresh, "--json"], kek: kek, in: directory)
        #expect(placed.status == 0, "\(placed.errors)")
        #expect(try OperationsTests.json(placed.output)["replaced"] == nil)
        #expect(try Self.users(fresh) == ["kept@signet.test"])
    }

    @Test("a database a newer Signet upgraded: signet serve refuses to start, saying so, and leaves it as it was")
    func serveRefusesNewerSchema() throws {
        let directory = try Self.folder("newer")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("signet.db").path
        do { _ = try SQLStore(path: path) }
        let next = SQLStore.knownSchemaVersion + 1
        _ = try rawSQLite(path, "INSERT INTO schema_migrations VALUES (\(next), 0)")
        let before = try rawSQLite(path, "SELECT version FROM schema_migrations ORDER BY version")
        // A server that starts anyway is stopped after a while, and fails the test.
        let process = Process()
        process.executableURL = ProcessTests.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--database", "sqlite:" + path]
        process.environment = [:]
        process.currentDirectoryURL = directory
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let exited = eventually(timeout: 30) { !process.isRunning }
        if !exited { kill(process.processIdentifier, SIGKILL) }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let serve = (status: exited ? process.terminationStatus : -1, errors: said)
        #expect(serve.status == 1, "\(serve.errors)")
        #expect(serve.errors.contains("schema_newer: the database is at schema \(next), and this signet knows schemas up to \(SQLStore.knownSchemaVersion)"), "\(serve.errors)")
        #expect(try rawSQLite(path, "SELECT version FROM schema_migrations ORDER BY version") == before)
    }
}
