import Foundation
import SignetClient
import SignetSoftware
import SignetWebAuthn
import Testing

/// The README's quick start, run line by line against a fresh server, so that it cannot rot.
@Suite struct ReadmeQuickstartTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lines between `<!-- TAG -->` and `<!-- /TAG -->`, inside the code fence.
    static func commands(_ tag: String = "quickstart") throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "<!-- \(tag) -->"), let end = readme.range(of: "<!-- /\(tag) -->") else { return [] }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("```") && !$0.isEmpty }
    }

    @Test("every quick-start command succeeds and prints ok")
    func quickstart() throws {
        let lines = try Self.commands()
        #expect(lines.count == 5)
        let server = try Self.run(lines)
        let state = server.directory.appendingPathComponent("phone.json").path
        #expect((try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int) == 0o600)
    }

    @Test("signet authenticator device-keys lists the phone's key, remove-device-key revokes it (and forgets it in the state file), an unknown ID is device_key_unknown")
    func authenticatorDeviceKeys() throws {
        let server = try Self.run([
            "scripts/run.sh authenticator signup --url http://127.0.0.1:8080 --state phone.json --email keys@example.com",
            "scripts/run.sh authenticator enroll-device-key --url http://127.0.0.1:8080 --state phone.json",
        ])
        func json(_ line: String) throws -> JSONValue {
            try StrictJSON().parse(Array(try Self.shell("scripts/run.sh authenticator \(line) --url http://127.0.0.1:8080 --state phone.json", server: server).output.utf8).filter { $0 != 10 })
        }
        let keys = try json("device-keys")["device_keys"]?.array ?? []
        let id = try #require(keys.first?["id"]?.string)
        #expect(keys.count == 1 && keys[0]["name"] == .string("signet authenticator"))
        #expect(try json("remove-device-key \(id)")["ok"] == .bool(true))
        let events = try json("events --take 2")["events"]?.array ?? []
        #expect(events.map { $0["type"] } == [.string("device_key_revoked"), .string("device_key_enrolled")], "\(events)")
        #expect(try json("device-keys")["device_keys"] == .array([]))
        let again = try json("remove-device-key \(id)")
        #expect(again["ok"] == .bool(false) && again["error"] == .string("device_key_unknown"), "\(again.serialized)")
        #expect(try json("remove-device-key")["error"] == .string("invalid_response"))
        // The phone approves with its passkey from then on.
        #expect(try json("approve '{\"type\":\"payment\",\"amount\":1}'")["ok"] == .bool(true))
    }

    @Test("the email-code quick start: a code from the development server's signet-mail/, a passkey, recovery codes, a new address")
    func emailQuickstart() throws {
        let lines = try Self.commands("quickstart-email")
        #expect(lines.count == 6)
        let server = try Self.run(lines)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: server.directory.appendingPathComponent("signet-mail").path)) ?? []).contains { $0.hasSuffix(".eml") })
    }

    @Test("the browser walk-through: the README's /authorize URL reaches the sign-in page, and its code exchanges with the README's curl line")
    func browserWalkthrough() async throws {
        let url = try #require(try Self.commands("web-authorize").first)
        let exchange = try Self.commands("web-exchange").joined(separator: " ").replacingOccurrences(of: "\\ ", with: "")
        let server = try ServerProcess()
        let authenticator = SoftwareAuthenticator()
        try await App(server, authenticator: authenticator).client.signUp(email: "walk@signet.test")
        var cookies: [String: String] = [:]
        let start = try #require(URL(string: url.replacingOccurrences(of: "localhost:8080", with: "localhost:\(server.port)")))
        let callback = try SDKBrowserTests.sheet(server, start, authenticator: authenticator, cookies: &cookies)
        let query = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(callback.absoluteString.hasPrefix("http://127.0.0.1:9999/cb?code=") && query.first { $0.name == "state" }?.value == "s1")
        let code = try #require(query.first { $0.name == "code" }?.value)
        let command = exchange.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)").replacingOccurrences(of: "code=CODE", with: "code=\(code)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let answer = try StrictJSON().parse(Array(out.fileHandleForReading.readDataToEndOfFile()))
        process.waitUntilExit()
        #expect(answer["access_token"]?.string != nil && answer["id_token"]?.string != nil && answer["token_type"] == .string("Bearer"), "\(answer.serialized)")
    }

    @Test("the two-device walkthrough: a tablet signed in by the phone's device key, every token DPoP-bound")
    func deviceWalkthrough() throws {
        let lines = try Self.commands("quickstart-device")
        #expect(lines.count == 6)
        let server = try ServerProcess()
        let (status, output) = try Self.shell((["set -e"] + lines).joined(separator: "\n"), server: server)
        #expect(status == 0, "\(output)")
        let results = try output.split(separator: "\n").map { try StrictJSON().parse(Array($0.utf8)) }
        #expect(results.count == 4 && results.allSatisfy { $0["ok"] == .bool(true) }, "\(output)")
        // The tablet's account is the phone's, and its stored token is bound to its own key.
        #expect(results.last?["sub"] == results.first?["sub"] && results.last?["email"] == .string("ada@example.com"))
        #expect(results[2]["device_request"]?["client_id"] == .string("dev"))
        let tablet = try StrictJSON().parse(Array(try Data(contentsOf: server.directory.appendingPathComponent("tablet.json"))))
        #expect(tablet["session"]?["accessToken"]?.string != nil && tablet["dpopKey"]?.string != nil)
    }

    @Test("the closed sign-up walkthrough: a stranger's sign-up refused, an operator's account, its code sign-in, a passkey added and signing in")
    func closedWalkthrough() throws {
        let lines = try Self.commands("quickstart-closed")
        #expect(lines.count == 7 && lines.first?.hasPrefix("SIGNET_SIGNUP=false scripts/run.sh ") == true)
        let server = try ServerProcess(environment: ["SIGNET_SIGNUP": "false"])
        let results = try lines.dropFirst().map { try Self.shell($0, server: server) }
        #expect(results[0].status == 1 && results[0].output.contains("\"error\":\"signup_disabled\""), "\(results[0].output)")
        #expect(results[1].status == 0 && results[1].output.contains("grace@example.com"), "\(results[1].output)")
        for (line, result) in zip(lines.dropFirst(3), results.dropFirst(2)) {
            let json = try StrictJSON().parse(Array(result.output.utf8).filter { $0 != 10 })
            #expect(result.status == 0 && json["ok"] == .bool(true), "\(line): \(result.output)")
        }
        let signedIn = try StrictJSON().parse(Array(try #require(results.last).output.utf8).filter { $0 != 10 })
        #expect(signedIn["email"] == .string("grace@example.com"))
    }

    /// One README line run by bash in `server`'s folder: the README runs the release build through
    /// scripts/run.sh on port 8080; here the debug build and the test server's port stand in.
    /// Its exit status and what it printed.
    static func shell(_ line: String, server: ServerProcess) throws -> (status: Int32, output: String) {
        let command = line.replacingOccurrences(of: "scripts/run.sh", with: ServerProcess.binary.path)
            .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = server.directory
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Runs `lines` one by one in a fresh server's folder, each expected to print `"ok": true`;
    /// returns the server, still running.
    static func run(_ lines: [String]) throws -> ServerProcess {
        let server = try ServerProcess()
        for line in lines {
            let (status, output) = try shell(line, server: server)
            #expect(status == 0, "\(line)")
            let json = try StrictJSON().parse(Array(output.utf8).filter { $0 != 10 })
            #expect(json["ok"] == .bool(true), "\(line): \(output)")
        }
        return server
    }
}
