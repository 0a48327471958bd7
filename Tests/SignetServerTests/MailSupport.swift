import Foundation
import SignetAuth
import SignetHTTP
import SignetWebAuthn
import Testing
import SignetTestSupport

/// A real SMTP server on loopback for one test: `scripts/smtp-server.py` (Debian's
/// python3-aiosmtpd), storing every message it accepts in a Maildir that the test reads.
final class SMTPServer: @unchecked Sendable {
    static let script = ProcessTests.binary.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/smtp-server.py").path
    /// Debian's Python, which has python3-aiosmtpd (a pyenv `python3` on PATH may not).
    static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
    static var available: Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python.hasPrefix("/") ? python : "/usr/bin/env")
        p.arguments = (python.hasPrefix("/") ? [] : [python]) + ["-c", "import aiosmtpd"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    /// The port it listens on: picked on the first start below the kernel's range of ephemeral
    /// ports, the same on a restart. A port in that range (as `--port 0` gave) could be taken
    /// while the server was stopped by any outgoing connection's local end, the suite's own
    /// many or Signet's retries to this relay; then the restart found it in use.
    private(set) var port: UInt16 = 0
    let maildir: URL
    let options: [String]
    private var process: Process?

    /// - Parameter options: the script's flags (`--starttls CERT KEY`, `--auth U:P`, ...).
    init(options: [String] = []) throws {
        maildir = Scratch.directory.appendingPathComponent("signet-smtp-\(UUID().uuidString)")
        self.options = options
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: maildir)
    }

    /// `smtp://127.0.0.1:PORT` (or `smtps://` for `--tls`).
    var url: String { (options.contains("--tls") ? "smtps" : "smtp") + "://127.0.0.1:\(port)" }

    /// Starts the server: on a free port the first time, on the same port after `stop()`.
    func start() throws {
        guard port == 0 else { return try start(on: port) }
        // Ports no connection is given on its own: below the ephemeral range's start.
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let ephemeral = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        let listenable = max(1024, ephemeral - 16384)..<max(1025, ephemeral)
        for attempt in 1...20 {
            do {
                return try start(on: UInt16(Int.random(in: listenable)))
            } catch let error as SMTPServerError where error.said == "in-use" && attempt < 20 {
                continue  // another listener has it: another port
            }
        }
    }

    private func start(on port: UInt16) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.python)
        p.arguments = [Self.script, "--port", String(port), "--maildir", maildir.path] + options
        let out = Pipe()
        // What it says when it cannot start goes to a file the failure quotes (a pipe nobody
        // read could fill and stall it).
        let errors = maildir.deletingLastPathComponent().appendingPathComponent(maildir.lastPathComponent + ".stderr")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        let errorFile = try FileHandle(forWritingTo: errors)
        p.standardOutput = out
        p.standardError = errorFile
        try p.run()
        try? errorFile.close()
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
        }
        let line = String(decoding: said, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("ready "), let listening = UInt16(line.dropFirst(6)) else {
            p.waitUntilExit()
            let why = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw SMTPServerError(said: line, exit: p.terminationStatus, errors: String(why.suffix(2_000)))
        }
        self.port = listening
        process = p
    }

    /// Stops the server (the messages it stored stay).
    func stop() {
        guard let p = process else { return }
        // SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM. The
        // Maildir is written by rename, so no message is ever half stored.
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// The server did not start: what it printed, its exit status and the end of its stderr.
    struct SMTPServerError: Error, CustomStringConvertible {
        let said: String
        let exit: Int32
        let errors: String
        var description: String { "the SMTP server did not start (said \"\(said)\", exit \(exit)): \(errors)" }
    }

    /// One stored message: its headers (names lower case) and its body, decoded.
    struct Message {
        let headers: [String: String]
        let body: String
        let raw: String
        var subject: String { headers["subject"] ?? "" }
        var kind: String { headers["x-signet-kind"] ?? "" }
        var to: String { headers["x-envelope-to"] ?? "" }
        /// The first run of 6 to 10 digits in the body: the code.
        var code: String? {
            body.split(whereSeparator: { !$0.isNumber }).first { (6...10).contains($0.count) }.map(String.init)
        }
    }

    /// Every message received so far, oldest first.
    func messages() -> [Message] {
        var files: [(Date, URL)] = []
        for folder in ["new", "cur"] {
            let dir = maildir.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] {
                let url = dir.appendingPathComponent(name)
                let date = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? Date()
                files.append((date, url))
            }
        }
        return files.sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1.lastPathComponent < $1.1.lastPathComponent) }.compactMap { _, url in
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
            return Self.parse(text)
        }
    }

    func messages(to address: String) -> [Message] { messages().filter { $0.to.contains(address) } }

    /// The code of the newest code message to `address`, waiting for it to arrive.
    func code(for address: String, after count: Int = 0, timeout: TimeInterval = 10) throws -> String {
        var found: String?
        _ = eventually(timeout: timeout) {
            let codes = messages(to: address).filter { $0.kind == "otp" }
            guard codes.count > count else { return false }
            found = codes.last?.code
            return found != nil
        }
        return try #require(found, "no code mail reached \(address)")
    }

    static func parse(_ text: String) -> Message {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = normalized.components(separatedBy: "\n\n")
        var headers: [String: String] = [:]
        for line in (parts.first ?? "").split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = parts.dropFirst().joined(separator: "\n\n")
        return Message(headers: headers, body: headers["content-transfer-encoding"] == "quoted-printable" ? decodeQP(body) : body, raw: text)
    }

    /// Quoted-printable (RFC 2045 §6.7) back to text.
    static func decodeQP(_ text: String) -> String {
        var bytes: [UInt8] = []
        let input = Array(text.replacingOccurrences(of: "=\n", with: "").utf8)
        var i = 0
        while i < input.count {
            if input[i] == UInt8(ascii: "="), i + 2 < input.count, let v = UInt8(String(decoding: input[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                bytes.append(v)
                i += 3
            } else {
                bytes.append(input[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension TestServer {
    /// A test server whose mail goes to `smtp`.
    convenience init(_ transport: Transport = TestServer.defaultTransport, smtp: SMTPServer, _ edit: (inout ServerConfiguration) -> Void = { _ in }) throws {
        try self.init(transport) { c in
            c.email.smtpURL = smtp.url
            c.email.retryDelay = 1
            c.email.maxRetryDelay = 1
            edit(&c)
        }
    }

    /// `POST /passwordless/start` for `email`.
    @discardableResult
    func startEmail(_ email: String, client: String = "app", headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        try post("/passwordless/start", .object(["client_id": .string(client), "connection": .string("email"), "email": .string(email), "send": .string("code")]),
                 headers: headers)
    }

    /// The passwordless grant.
    func signIn(email: String, code: String, client: String = "app", scope: String? = nil, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        var body: JSONObject = [
            "grant_type": .string(GrantNames.passwordlessOTP), "client_id": .string(client), "username": .string(email), "otp": .string(code),
            "realm": .string("email"),
        ]
        if let scope { body["scope"] = .string(scope) }
        return try post("/oauth/token", .object(body), headers: headers)
    }
}
