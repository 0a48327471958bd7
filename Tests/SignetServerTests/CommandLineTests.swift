import Foundation
import SignetStore
import SignetTestSupport
import Testing

/// A wrong command line names what is wrong above the usage, and an option given without its value
/// is refused instead of falling back to the default.
@Suite struct CommandLineTests {
    @Test("a wrong command line says which word is wrong, on the line before the usage, with status 2; no file is made", arguments: [
        (["nope"], "signet: no command \"nope\""),
        (["origin"], "the fingerprint is missing"),
        (["origin", "AB:CD:ZZ"], "\"Z\" is not a hexadecimal digit"),
        (["origin", "AB:CD"], "that is 2 bytes; a SHA-256 fingerprint has 32"),
        (["origin", "AB:CD:E"], "that is 5 hexadecimal digits; a SHA-256 fingerprint has 64 (32 bytes)"),
        (["origin", String(repeating: "AB:", count: 19) + "AB"], "a SHA-1 fingerprint: give the SHA256 one"),
        (["keys"], "which keys command?"),
        (["keys", "turn"], "no keys command \"turn\""),
        (["keys", "revoke"], "which key? give its KID"),
        (["keys", "revoke", "ABCDEFGHIJKL", "MNOPQRSTUVWX"], "one KID at a time"),
        (["keys", "rotate", "--frob"], "unknown option --frob"),
        (["serve", "--frob"], "unknown option --frob"),
        (["backup"], "--to is required"),
        (["copy", "--to", "copy.db"], "--to takes a database URL, sqlite:PATH or postgres://..., not \"copy.db\""),
        (["copy", "--to", "sqlite:copy.db", "--seal"], "--seal is backup's"),
        (["unseal", "--to", "plain.db"], "the sealed copy comes first"),
        (["unseal", "copy.db.sealed"], "--to is required"),
        (["restore", "--check"], "--from is required"),
        (["verify", "login", "response.json"], "registration or authentication, not \"login\""),
        (["verify", "registration"], "the response file is missing"),
        (["verify", "registration", "response.json", "--now", "yesterday"], "--now needs an ISO-8601 time"),
        (["client-key", "make"], "new or assertion, not \"make\""),
        (["client-key", "new"], "--out is required"),
        (["client-key", "new", "--out", "key.pem", "--frob", "1"], "unknown option --frob"),
        (["client-key", "assertion", "--key", "key.pem", "--audience", "https://a.example"], "--client-id is required"),
        (["bench", "run"], "no benchmark \"run\""),
        (["bench", "verify", "--rounds", "many"], "--rounds needs a number, not \"many\""),
        (["bench", "login", "--rate", "0"], "--rate and --client-threads must be positive"),
        (["authenticator", "fly", "--state", "phone.json"], "no authenticator command \"fly\""),
        (["authenticator", "signin"], "--state FILE is required"),
        (["authenticator", "signup", "--state", "phone.json", "--emial", "a@b.example"], "unknown option --emial"),
        (["authenticator", "signin", "ada@example.com", "--state", "phone.json"], "unexpected \"ada@example.com\""),
        (["authenticator", "end-session", "ID1", "ID2", "--state", "phone.json"], "unexpected \"ID2\""),
        (["doctor"], "--config is required"),
        (["admin"], "which group: users, clients, roles, log-streams, stats or logs?"),
        (["admin", "users"], "which users command?"),
        (["admin", "users", "list", "--frob"], "unknown option --frob"),
        (["admin", "users", "frob", "--database", "sqlite:typo.db"], "no admin command \"users frob\""),
        (["admin", "people", "list"], "no admin group \"people\": users, clients, roles, log-streams, stats or logs"),
    ])
    func problems(command: [String], problem: String) throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, errors) = try Self.runBriefly(command, in: folder)
        #expect(status == 2, "\(command): \(errors)")
        #expect(errors.split(separator: "\n").first.map { $0.contains(problem) } == true, "\(command): \(errors)")
        #expect(errors.contains("usage: signet"), "\(command): \(errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(command) made a file")
    }

    @Test("a wrong admin command line shows the usage of the group it names, not all of it; with no group, all of it")
    func adminGroupUsage() throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, roles) = try Self.runBriefly(["admin", "roles", "--frob"], in: folder)
        let lines = roles.split(separator: "\n").dropFirst()
        #expect(lines.first?.hasPrefix("usage: signet admin roles list") == true, "\(roles)")
        #expect(lines.filter { $0.contains("signet admin ") }.allSatisfy { $0.contains("signet admin roles ") }, "\(roles)")
        #expect(lines.count >= 6 && lines.last == "every command takes --database URL or --config FILE, and --json", "\(roles)")
        let (_, all) = try Self.runBriefly(["admin"], in: folder)
        for group in ["users", "clients", "roles", "log-streams", "stats", "logs"] { #expect(all.contains("signet admin \(group) "), "\(group)") }
    }

    @Test("every command signet admin's usage names gets past the check of names made before the database is opened")
    func adminCommandsKnown() throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, usage) = try ProcessTests.run(["admin", "--help"])
        var named: Set<[String]> = []
        for line in usage.split(separator: "\n") {
            guard let start = line.range(of: "signet admin ") else { continue }
            let parts = line[start.upperBound...].components(separatedBy: " | ")
            let words = parts[0].split(separator: " ").map(String.init)
            guard words.count >= 2, !words[1].hasPrefix("[") else { continue }
            named.insert([words[0], words[1]])
            for part in parts.dropFirst() {
                if let word = part.split(separator: " ").first, !word.hasPrefix("-") { named.insert([words[0], String(word)]) }
            }
        }
        #expect(named.count >= 30, "\(named.sorted { $0.joined() < $1.joined() })")
        for command in named {
            let (status, errors) = try Self.runBriefly(["admin"] + command + ["--database", "sqlite:typo.db"], in: folder)
            #expect(status == 1 && errors.contains("there is no SQLite database at typo.db"), "\(command): \(errors)")
        }
    }

    /// `--config $UNSET` leaves the option without its value: before, `serve` started in development
    /// mode and `admin`, `keys` and `backup` used the current directory's signet.db.
    @Test("an option left without its value, at the end or before another option, is refused: nothing starts, nothing is opened", arguments: [
        ["serve", "--config"],
        ["serve", "--listen", "127.0.0.1:0", "--database"],
        ["serve", "--config", "--listen", "127.0.0.1:0"],
        ["keys", "status", "--database"],
        ["keys", "rekey", "--new-kek-file"],
        ["admin", "users", "list", "--database"],
        ["admin", "users", "list", "--config", "--json"],
        ["backup", "--to", "copy.db", "--database"],
        ["restore", "--from"],
        ["copy", "--to"],
        ["unseal", "copy.db.sealed", "--to"],
        ["doctor", "--config"],
        ["verify", "registration", "response.json", "--anchors"],
        ["client-key", "new", "--out"],
        ["bench", "login", "--concurrency"],
        ["bench", "disk", "--path"],
        ["authenticator", "signin", "--state"],
    ])
    func missingValue(command: [String]) throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, errors) = try Self.runBriefly(command, in: folder)
        // The first option whose next word is missing or another option.
        let option = command.indices.first { command[$0].hasPrefix("--") && ($0 + 1 == command.count || command[$0 + 1].hasPrefix("--")) }.map { command[$0] }
        #expect(status == 2, "\(command): \(errors)")
        #expect(errors.hasPrefix("signet \(command[0]): \(option ?? "?") needs a value"), "\(command): \(errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(command) made a file")
    }

    /// The PostgreSQL side of ``ProcessTests/missingDatabase()``: a mistyped database name on a
    /// cluster that has it (made empty, as `createdb` would) was migrated into an empty Signet.
    @Test("the commands that read or change a server's database refuse a PostgreSQL database without Signet's tables, naming it, and make none there",
          .enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"]?.isEmpty == false))
    func emptyPostgres() throws {
        let admin = try #require(ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"])
        let name = "e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let url = try PostgresAdmin.createDatabase(adminURL: admin, name: String(name))
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let kek = ["SIGNET_KEK": String(repeating: "A", count: 43)]
        for command in [["admin", "users", "list"], ["admin", "stats"], ["keys", "status"], ["keys", "rotate"], ["keys", "revoke", "ABCDEFGHIJKL"]] {
            let (status, output) = try ProcessTests.run(command + ["--database", url], in: folder, environment: kek)
            #expect(status == 1 && output.contains("the PostgreSQL database \(name) on 127.0.0.1 holds no Signet tables"), "\(command): \(status) \(output)")
            #expect(try !PostgresAdmin.holdsSignet(url: url), "\(command) made the tables")
        }
        // Once a server has made them, the same commands run.
        _ = try SQLStore(postgres: url, connections: 1)
        let (status, output) = try ProcessTests.run(["admin", "users", "list", "--database", url], in: folder, environment: kek)
        #expect(status == 0 && output.contains("0 of 0 user(s)"), "\(output)")
    }

    static func emptyFolder() throws -> URL {
        let folder = Scratch.directory.appendingPathComponent("signet-command-line-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The status and standard error of a command that must end at once: one that starts serving
    /// instead (the old fallback) is stopped after 20 seconds and fails the test, never hangs it.
    static func runBriefly(_ args: [String], in folder: URL) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = ProcessTests.binary
        process.arguments = args
        process.currentDirectoryURL = folder
        let errors = Scratch.directory.appendingPathComponent("signet-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return (-1, "still running after 20 s")
        }
        return (process.terminationStatus, String(decoding: try Data(contentsOf: errors), as: UTF8.self))
    }
}
