import Foundation
import SignetAuth
import SignetCrypto
import SignetCurl
import SignetHTTP
import SignetServer
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `backup.directory`: the SQLite database copied on its own, checked, named by its time, the
/// newest `backup.keep` kept.
@Suite struct ScheduledBackupTests {
    static func metric(_ server: TestServer, _ line: String) throws -> Bool {
        String(decoding: try server.get("/metrics").body, as: UTF8.self).contains(line + "\n")
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("due when the folder has no copy or its newest is interval_hours old, also after a restart; each checked, 0600 in a 0700 folder, holding the accounts; the newest keep kept, nothing else in the folder touched")
    func schedule() throws {
        let folder = Scratch.directory.appendingPathComponent("backups-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Unsealed (backup.seal: false), so that the copies read as SQLite files; sealed ones below.
        let server = try TestServer { c in
            c.backupDirectory = folder
            c.backupIntervalHours = 6
            c.backupKeep = 3
            c.backupSeal = false
        }
        #expect(try Self.metric(server, #"signet_backups_total{outcome="success"} 0"#))
        #expect(try Self.metric(server, "signet_backup_last_success_timestamp_seconds 0"))
        _ = try Phone(server).signUp(email: "first@signet.test")
        let before = server.clock.now
        let first = try #require(server.app.backUpIfDue())
        #expect(Self.named(first, between: before, and: server.clock.now, suffix: ".db"))
        #expect(try Self.mode(first) == 0o600 && Self.mode(folder) == 0o700)
        #expect(try rawSQLite(first, "PRAGMA integrity_check") == ["ok"] && rawSQLite(first, "SELECT email FROM users") == ["first@signet.test"])
        #expect(!FileManager.default.fileExists(atPath: first + "-wal"))
        // Not due again until six hours have passed.
        #expect(server.app.backUpIfDue() == nil)
        server.clock.advance(6 * 3600 - 60)
        #expect(server.app.backUpIfDue() == nil)
        // Files of other names stay, whatever they hold; a copy's part left by a stop goes.
        let others = ["signet-notes.db", "signet-20261301T000000Z.db", "signet.db", "signet-20260101T000000Z.db.bak"]
        for name in others { _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data("keep".utf8)) }
        _ = FileManager.default.createFile(atPath: folder + "/signet-20260101T000000Z.db.part", contents: Data("torn".utf8))
        var made = [first]
        for n in 0..<4 {
            server.clock.advance(6 * 3600 + 1)
            _ = try Phone(server).signUp(email: "later\(n)@signet.test")
            made.append(try #require(server.app.backUpIfDue(), "copy \(n)"))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == (others + made.suffix(3).map { ($0 as NSString).lastPathComponent }).sorted(), "\(names)")
        #expect(try rawSQLite(made[4], "SELECT count(*) FROM users") == ["5"])
        // The copy's time, read from its name: the clock may have passed a second's edge since.
        let last = try #require(Self.seconds(named: made[4]))
        #expect(try Self.metric(server, #"signet_backups_total{outcome="success"} 5"#) && Self.metric(server, #"signet_backups_total{outcome="failure"} 0"#))
        #expect(try Self.metric(server, "signet_backup_last_success_timestamp_seconds \(last)"))

        // A restart on the same folder: the newest copy is known, nothing is due yet.
        let again = try TestServer(opening: (server.app.configuration.database, server.directory.appendingPathComponent("signet.kek"))) { c in
            c.backupDirectory = folder
            c.backupIntervalHours = 6
            c.backupKeep = 3
            c.backupSeal = false
        }
        again.clock.advance(server.clock.now.timeIntervalSince(again.clock.now) + 60)
        #expect(again.app.backUpIfDue() == nil)
        #expect(try Self.metric(again, "signet_backup_last_success_timestamp_seconds \(last)"))
        again.clock.advance(6 * 3600)
        #expect(again.app.backUpIfDue() != nil)
    }

    @Test("sealed by default: no account readable in the copy, which names its key; signet restore --from the folder opens it with that key alone, backup --seal makes the same, and unseal opens one into a plain file")
    func sealed() throws {
        let folder = Scratch.directory.appendingPathComponent("sealed-\(UUID().uuidString)").path
        let scratch = Scratch.directory.appendingPathComponent("sealed-restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { [folder, scratch.path].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let server = try TestServer { c in c.backupDirectory = folder }
        _ = try Phone(server).signUp(email: "sealed@signet.test")
        let kek = try KeyEncryptionKey.load(environment: [:], file: server.directory.appendingPathComponent("signet.kek").path)
        let before = server.clock.now
        let copy = try #require(server.app.backUpIfDue())
        #expect(Self.named(copy, between: before, and: server.clock.now, suffix: ".db.sealed"))
        #expect(try Self.mode(copy) == 0o600 && SealedBackup.isSealed(copy) && SealedBackup.keyID(copy) == KeyEncryptionKey.id(kek))
        let bytes = String(decoding: try #require(FileManager.default.contents(atPath: copy)), as: UTF8.self)
        #expect(!bytes.contains("sealed@signet.test") && !bytes.contains("SQLite format 3"))
        // An older unsealed copy beside it: the newest, sealed, is the one restored.
        _ = FileManager.default.createFile(atPath: folder + "/signet-20200101T000000Z.db", contents: Data("older".utf8))
        #expect(ScheduledBackup.copies(in: folder) == ["signet-20200101T000000Z.db", (copy as NSString).lastPathComponent])

        func signet(_ arguments: [String], kek: [UInt8]?) throws -> (status: Int32, output: String, errors: String) {
            try runProcess(ProcessTests.binary.path, arguments, environment: kek.map { ["SIGNET_KEK": Base64URL.encode($0)] } ?? [:], in: scratch)
        }
        let target = ["--database", "sqlite:" + scratch.appendingPathComponent("restored.db").path]
        let stranger = SecureRandom.bytes(32)
        let refused = try signet(["restore", "--from", folder, "--check"] + target, kek: stranger)
        #expect(refused.status == 2 && refused.errors.contains("is sealed under key-encryption key \(KeyEncryptionKey.id(kek)); the one configured is \(KeyEncryptionKey.id(stranger))"),
                "\(refused.errors)")
        let keyless = try signet(["restore", "--from", folder, "--check"] + target, kek: nil)
        #expect(keyless.status == 2 && keyless.errors.contains("give that key"), "\(keyless.errors)")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("signet.kek").path), "no key made by a restore")
        let restored = try signet(["restore", "--from", folder, "--json"] + target, kek: kek)
        #expect(restored.status == 0, "\(restored.errors)")
        let report = try OperationsTests.json(restored.output)
        #expect(report["sealed"] == .bool(true) && report["users"] == .number("1") && report["from"] == .string(copy), "\(restored.output)")
        #expect(try rawSQLite(scratch.appendingPathComponent("restored.db").path, "SELECT email FROM users") == ["sealed@signet.test"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).allSatisfy { !$0.contains("unsealed") && !$0.contains("restoring") })

        // By hand: --seal, under the key that opens the database's signing keys, or refused.
        let database = ["--database", server.app.configuration.database]
        let by = scratch.appendingPathComponent("by-hand.db.sealed").path
        #expect(try signet(["backup", "--to", by, "--seal"] + database, kek: stranger).status == 2 && !FileManager.default.fileExists(atPath: by))
        let made = try signet(["backup", "--to", by, "--seal", "--json"] + database, kek: kek)
        #expect(try made.status == 0 && OperationsTests.json(made.output)["sealed"] == .bool(true) && SealedBackup.isSealed(by), "\(made.errors)")
        let checked = try signet(["restore", "--from", by, "--check"] + target, kek: kek)
        #expect(checked.status == 0 && checked.output.contains("the copy was sealed"), "\(checked.output) \(checked.errors)")
        #expect(try signet(["copy", "--to", "sqlite:" + scratch.appendingPathComponent("x.db").path, "--seal"] + database, kek: kek).status == 2)

        // Opened by hand into a plain file: only with its key, never over a file, only a sealed copy.
        let plain = scratch.appendingPathComponent("plain.db").path
        let foreign = try signet(["unseal", copy, "--to", plain], kek: stranger)
        #expect(foreign.status == 2 && foreign.errors.contains(KeyEncryptionKey.id(kek)) && !FileManager.default.fileExists(atPath: plain), "\(foreign.errors)")
        #expect(try signet(["unseal", copy, "--to", plain], kek: nil).status == 2 && !FileManager.default.fileExists(atPath: plain))
        let unsealed = try signet(["unseal", copy, "--to", plain, "--json"], kek: kek)
        #expect(try unsealed.status == 0 && OperationsTests.json(unsealed.output)["users"] == .number("1"), "\(unsealed.errors)")
        #expect(try Self.mode(plain) == 0o600 && rawSQLite(plain, "SELECT email FROM users") == ["sealed@signet.test"])
        #expect(try signet(["unseal", copy, "--to", plain], kek: kek).status == 2)
        #expect(try signet(["unseal", plain, "--to", plain + ".2"], kek: kek).status == 2 && !FileManager.default.fileExists(atPath: plain + ".2"))
        var altered = Array(try #require(FileManager.default.contents(atPath: copy)))
        altered[altered.count / 2] ^= 0x10
        _ = FileManager.default.createFile(atPath: plain + ".altered", contents: Data(altered))
        let broken = try signet(["unseal", plain + ".altered", "--to", plain + ".3"], kek: kek)
        #expect(broken.status == 2 && broken.errors.contains("fails authentication") && !FileManager.default.fileExists(atPath: plain + ".3"), "\(broken.errors)")
        #expect(try signet(["unseal", copy], kek: kek).status == 2)
    }

    @Test("a copy that cannot be made is logged and counted, tried again five minutes later, and made once the folder can take it")
    func failure() throws {
        let parent = Scratch.directory.appendingPathComponent("backups-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        // A file where the folder should be.
        let folder = parent + "/copies"
        _ = FileManager.default.createFile(atPath: folder, contents: Data("in the way".utf8))
        let server = try TestServer { c in c.backupDirectory = folder }
        func logged(_ message: String) throws -> String? {
            server.app.server.log.flush()
            return try String(contentsOf: server.logFile, encoding: .utf8).split(separator: "\n").first { $0.contains(#""msg":"\#(message)""#) }.map(String.init)
        }
        let before = server.clock.now
        #expect(server.app.backUpIfDue() == nil)
        let after = server.clock.now
        #expect(try Self.metric(server, #"signet_backups_total{outcome="failure"} 1"#))
        let failed = try #require(try logged("backup failed"))
        #expect(failed.contains(#""path":"\#(folder)/signet-"#) && failed.contains(#""error":""#), "\(failed)")
        try FileManager.default.removeItem(atPath: folder)
        server.clock.advance(to: before.timeIntervalSince1970 + 290)
        #expect(server.app.backUpIfDue() == nil, "not before five minutes")
        server.clock.advance(to: after.timeIntervalSince1970 + 300)
        let made = try #require(server.app.backUpIfDue())
        #expect(FileManager.default.fileExists(atPath: made))
        #expect(try Self.metric(server, #"signet_backups_total{outcome="success"} 1"#) && Self.metric(server, #"signet_backups_total{outcome="failure"} 1"#))
        let line = try #require(try logged("backup made"))
        #expect(line.contains(#""users":0"#) && line.contains(#""removed":0"#), "\(line)")
    }

    @Test("backup settings: from the file and the environment, bounded, and refused for PostgreSQL; unset, nothing is scheduled")
    func settings() throws {
        let c = try ConfigurationLoader.load(file: nil, environment: [
            "SIGNET_BACKUP_DIRECTORY": "/var/backups/signet", "SIGNET_BACKUP_INTERVAL_HOURS": "12", "SIGNET_BACKUP_KEEP": "14",
        ])
        #expect(c.backupDirectory == "/var/backups/signet" && c.backupIntervalHours == 12 && c.backupKeep == 14 && c.backupSeal)
        let defaults = try ConfigurationLoader.load(file: nil, environment: [:])
        #expect(defaults.backupDirectory == nil && defaults.backupIntervalHours == 24 && defaults.backupKeep == 7 && defaults.backupSeal)
        #expect(try !ConfigurationLoader.load(file: nil, environment: ["SIGNET_BACKUP_SEAL": "false"]).backupSeal)
        #expect { try ConfigurationLoader.load(file: nil, environment: ["SIGNET_BACKUP_SEAL": "maybe"]) } throws: { "\($0)".contains("backup.seal") }
        for (key, value, says) in [("SIGNET_BACKUP_INTERVAL_HOURS", "0", "interval_hours"), ("SIGNET_BACKUP_KEEP", "0", "keep"),
                                   ("SIGNET_BACKUP_KEEP", "1001", "keep"), ("SIGNET_BACKUP_DIRECTORY", "", "backup.directory")] {
            var environment = ["SIGNET_BACKUP_DIRECTORY": "/b"]
            environment[key] = value
            #expect { try ConfigurationLoader.load(file: nil, environment: environment) } throws: {
                "\($0)".contains(says)
            }
        }
        #expect {
            try ConfigurationLoader.load(file: nil, environment: ["SIGNET_BACKUP_DIRECTORY": "/b"], database: "postgres://localhost/signet")
        } throws: { "\($0)".contains("pg_dump") }
        let server = try TestServer()
        #expect(server.app.backUpIfDue() == nil)
        #expect(try !String(decoding: server.get("/metrics").body, as: UTF8.self).contains("signet_backups_total"))
    }

    @Test("signet doctor: no scheduled copies noted; a folder this user cannot make fails; one on the database's own file system is noted, one elsewhere passes; a newest copy older than two intervals and an hour fails")
    func doctor() throws {
        func check(_ edit: (inout ServerConfiguration) -> Void) -> DoctorCheck? {
            var configuration = TestServer.configuration()
            configuration.database = "sqlite:" + Scratch.directory.appendingPathComponent("doctor.db").path
            edit(&configuration)
            return Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks().first { $0.name == "backup" }
        }
        let unset = check { _ in }
        #expect(unset?.status == .note && unset?.detail.contains("set backup.directory") == true, "\(String(describing: unset))")
        let blocker = Scratch.directory.appendingPathComponent("blocker-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: blocker, contents: Data("a file".utf8))
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        let under = check { $0.backupDirectory = blocker + "/copies" }
        #expect(under?.status == .fail && under?.fix?.contains("mode 0700") == true, "\(String(describing: under))")
        let beside = check { $0.backupDirectory = Scratch.directory.appendingPathComponent("copies-\(UUID().uuidString)").path }
        #expect(beside?.status == .note && beside?.detail.contains("own file system") == true, "\(String(describing: beside))")
        // Another file system: the machine's shared memory, where Linux has one apart.
        var scratch = stat(), shared = stat()
        try #require(stat(Scratch.directory.path, &scratch) == 0 && stat("/dev/shm", &shared) == 0 && scratch.st_dev != shared.st_dev,
                     "/dev/shm is on the scratch folder's file system here")
        let copies = "/dev/shm/signet-copies-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copies) }
        let apart = check { $0.backupDirectory = copies }
        #expect(apart?.status == .pass && apart?.detail.contains("a checked, sealed copy every 24 h") == true, "\(String(describing: apart))")
        #expect(apart?.detail.hasSuffix("; none made yet (a running server makes the first within a minute)") == true, "\(String(describing: apart))")
        // The newest copy's age, from its name: up to two intervals and an hour it passes; older,
        // the copies have stopped, whatever else the folder holds.
        try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func copy(hoursAgo: Int64, sealed: Bool = true) {
            _ = FileManager.default.createFile(atPath: copies + "/" + ScheduledBackup.name(at: now - hoursAgo * 3_600_000, sealed: sealed), contents: Data("copy".utf8))
        }
        copy(hoursAgo: 50)
        _ = FileManager.default.createFile(atPath: copies + "/signet-notes.db", contents: Data("other".utf8))
        let stopped = check { $0.backupDirectory = copies }
        #expect(stopped?.status == .fail && stopped?.detail.contains("made 2 days ago, more than twice backup.interval_hours (24 h): the copies have stopped") == true,
                "\(String(describing: stopped))")
        #expect(stopped?.fix?.contains("backup failed") == true)
        copy(hoursAgo: 47, sealed: false)
        let late = check { $0.backupDirectory = copies }
        #expect(late?.status == .pass && late?.detail.hasSuffix("; the newest made 47 h ago") == true, "\(String(describing: late))")
        copy(hoursAgo: 1)
        #expect(check { $0.backupDirectory = copies }?.detail.hasSuffix("; the newest made 60 min ago") == true)
        // With copies every 6 hours, 14 hours is too old.
        let often = check { $0.backupDirectory = copies; $0.backupIntervalHours = 6 }
        #expect(often?.status == .pass)
        try FileManager.default.removeItem(atPath: copies + "/" + ScheduledBackup.name(at: now - 3_600_000, sealed: true))
        let sixHourly = check { $0.backupDirectory = copies; $0.backupIntervalHours = 6 }
        #expect(sixHourly?.status == .fail && sixHourly?.detail.contains("made 47 h ago") == true, "\(String(describing: sixHourly))")
        let open = check { $0.backupDirectory = "/dev/shm/signet-copies-\(UUID().uuidString)"; $0.backupSeal = false }
        #expect(open?.detail.contains("a checked copy every 24 h") == true && open?.detail.contains("backup.seal is off") == true, "\(String(describing: open))")
        #expect(check { $0.database = "postgres://localhost/signet" } == nil)
    }

    /// Whether a copy is named for a second from `start` to `end`: the test clock follows the wall
    /// clock, which may pass a second's edge while the copy is made.
    static func named(_ path: String, between start: Date, and end: Date, suffix: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        var second = start.timeIntervalSince1970.rounded(.down)
        while second <= end.timeIntervalSince1970 {
            if name == "signet-" + stamp(Date(timeIntervalSince1970: second)) + suffix { return true }
            second += 1
        }
        return false
    }

    /// The time a copy's name gives, in whole seconds.
    static func seconds(named path: String) -> Int64? {
        let name = (path as NSString).lastPathComponent
        guard name.hasPrefix("signet-"), name.count >= 23 else { return nil }
        let stamp = String(name.dropFirst(7).prefix(16))
        return formatter.date(from: stamp).map { Int64($0.timeIntervalSince1970) }
    }

    static func stamp(_ date: Date) -> String { formatter.string(from: date) }

    static var formatter: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter
    }
}
