import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing
import SignetTestSupport

/// A clock the tests can move forward.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(_ seconds: TimeInterval) {
        lock.lock()
        offset += seconds
        lock.unlock()
    }
    /// Moves the clock on to `seconds` since 1970 (never back): for a check just before, or at, a
    /// time the server fixed, however long the steps since then took on a loaded machine.
    func advance(to seconds: TimeInterval) {
        advance(max(0, seconds - now.timeIntervalSince1970))
    }
    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return Date().addingTimeInterval(offset)
    }
    /// Moves the clock on to the start of the next rate-limit window of `seconds`: windows are
    /// fixed multiples of their length, and a test whose requests crossed into the next one, on a
    /// machine loaded enough, would see its count start over.
    func startWindow(_ seconds: Int) {
        let window = TimeInterval(seconds)
        advance(to: (now.timeIntervalSince1970 / window).rounded(.down) * window + window)
    }
}

/// A Signet with its own SQLite file, for one test. In process by default: requests go to the
/// service as values, through the router, middleware and error mapping, without a socket. The
/// tests of the HTTP layer itself (limits, keep-alive, the access log, processes) ask for
/// `.socket`, a real loopback port.
final class TestServer: @unchecked Sendable {
    enum Transport { case inProcess, socket }
    /// The transport a test gets unless it names one: in process, or a real socket with
    /// `SIGNET_TEST_TRANSPORT=socket` (the test script's second pass over the server tests, where
    /// answers wait for their writes' shared commit, as in production).
    static let defaultTransport: Transport = ProcessInfo.processInfo.environment["SIGNET_TEST_TRANSPORT"] == "socket" ? .socket : .inProcess
    static let rpID = "signet.test"
    static let origin = "https://signet.test"
    static let bankSecret = "bank-secret-0123456789abcdef"
    static var bankAuthorization: (String, String) { ("Authorization", "Basic " + Data("bank:\(bankSecret)".utf8).base64EncodedString()) }
    static let androidFingerprint = "B3:5D:8D:A5:8A:F0:E4:59:8A:B9:2C:40:05:BE:D4:06:CD:87:CE:65:E7:5C:2A:48:E9:7C:DA:98:6B:A9:1B:5E"

    let directory: URL
    let clock = TestClock()
    let app: SignetApp
    let logFile: URL
    let transport: Transport
    var port: UInt16 { app.server.port }
    var store: any Store { app.store }

    static func configuration(_ edit: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        var c = ServerConfiguration(issuer: "https://signet.test")
        c.listenHost = "127.0.0.1"
        c.listenPort = 0
        c.rpID = rpID
        c.rpName = "Signet Test"
        c.webOrigins = [origin]
        c.audiences = ["https://api.signet.test"]
        c.clients = [
            ClientConfiguration(
                id: "app", grants: GrantNames.all, iosApps: [.init(teamID: "ABCDE12345", bundleID: "test.signet.app")],
                androidApps: [.init(packageName: "test.signet.app", fingerprints: [parseFingerprint(androidFingerprint)!])]),
            ClientConfiguration(id: "other", grants: GrantNames.all),
            ClientConfiguration(id: "refreshless", grants: [GrantNames.webauthn]),
            // A resource server: it verifies action tokens with its secret.
            ClientConfiguration(id: "bank", grants: [], secretHash: Digest.sha256.hash(Array(TestServer.bankSecret.utf8))),
        ]
        c.threads = 4
        c.requestDeadline = 5
        edit(&c)
        return c
    }

    /// - Parameter restoring: a database file (and the KEK file beside it) to start from, copied in.
    /// - Parameter sharing: another test server's directory, whose database and KEK this one uses
    ///   too (a second instance).
    /// - Parameter opening: a database URL (SQLite or PostgreSQL) to serve in place, with the KEK
    ///   file its keys are sealed under, copied in.
    /// - Parameter upkeep: how often the app's upkeep and metadata timers run (a minute; a test
    ///   of the timers themselves shortens it).
    init(_ transport: Transport = TestServer.defaultTransport, restoring: (database: URL, kek: URL)? = nil, sharing: URL? = nil,
         opening: (database: String, kek: URL)? = nil, upkeep: TimeInterval = 60, _ edit: (inout ServerConfiguration) -> Void = { _ in }) throws {
        self.transport = transport
        directory = Scratch.directory.appendingPathComponent("signet-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let restoring {
            try FileManager.default.copyItem(at: restoring.database, to: directory.appendingPathComponent("signet.db"))
            try FileManager.default.copyItem(at: restoring.kek, to: directory.appendingPathComponent("signet.kek"))
        }
        if let opening { try FileManager.default.copyItem(at: opening.kek, to: directory.appendingPathComponent("signet.kek")) }
        var configuration = TestServer.configuration(edit)
        configuration.database = opening?.database ?? "sqlite:" + (sharing ?? directory).appendingPathComponent("signet.db").path
        configuration.keyEncryptionKeyFile = (sharing ?? directory).appendingPathComponent("signet.kek").path
        logFile = directory.appendingPathComponent("access.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = AccessLog(output: try FileHandle(forWritingTo: logFile))
        let clock = self.clock
        app = try SignetApp(configuration: configuration, environment: [:], clock: { clock.now }, log: log, listen: transport == .socket, upkeepInterval: upkeep)
    }

    deinit {
        app.server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A client on the loopback port (``Transport/socket`` only).
    func client() -> HTTPClient {
        precondition(transport == .socket, "an in-process TestServer has no port; use send(_:_:headers:body:) or TestServer(.socket)")
        return HTTPClient(port: port)
    }

    /// One request, over the transport of this server. A JSON body gets its Content-Type as
    /// HTTPClient adds it.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> HTTPClient.Response {
        if transport == .socket { return try client().send(method, path, headers: headers, body: body) }
        var fields: [String: String] = [:]
        if !body.isEmpty { fields["content-type"] = "application/json" }
        for (name, value) in headers { fields[name.lowercased()] = value }
        // In process, a test may say which address the request comes from.
        let remote = fields.removeValue(forKey: "x-test-remote") ?? "127.0.0.1"
        // As the HTTP layer hands it over: the path percent-decoded, the query apart.
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        let query = HTTPRequest.parseQueryNotingRepeats(parts.count > 1 ? parts[1][...] : "")
        let request = HTTPRequest(method: method, path: parts[0].removingPercentEncoding ?? parts[0], headers: fields, body: body, remoteAddress: remote,
                                  requestID: String(UInt64.random(in: 0...UInt64.max), radix: 16),
                                  query: query.query, queryRepeats: query.repeats)
        let response = app.service.handle(request)
        var answered: [String: String] = [:]
        for (name, value) in response.headers { HTTPClient.Response.add(name.lowercased(), value, to: &answered) }
        return HTTPClient.Response(status: response.status, headers: answered, body: response.body)
    }

    /// POSTs JSON and returns status and parsed body.
    @discardableResult
    func post(_ path: String, _ body: JSONValue, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        let response = try send("POST", path, headers: headers, body: Array(body.serialized.utf8))
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
    }

    func get(_ path: String, headers: [(String, String)] = []) throws -> HTTPClient.Response {
        try send("GET", path, headers: headers)
    }

    var counts: [String: Int] { (try? store.rowCounts()) ?? [:] }

    /// `POST /actions/verify` as the resource server `bank` does it, for the account `sub`.
    func verifyAction(_ token: String, _ action: JSONValue, sub: String, headers: [(String, String)] = [TestServer.bankAuthorization]) throws -> (status: Int, json: JSONValue) {
        try post("/actions/verify", .object(["action_token": .string(token), "action": action, "sub": .string(sub)]), headers: headers)
    }
}

/// A phone: a software authenticator that talks to Signet's passkey API as an app would.
struct Phone {
    var server: TestServer
    let authenticator: SoftwareAuthenticator
    var origin = TestServer.origin
    var clientID = "app"
    /// The `User-Agent` of its token calls, when it sends one.
    var userAgent: String?

    init(_ server: TestServer, settings: SoftwareAuthenticator.Settings = SoftwareAuthenticator.Settings()) {
        self.server = server
        authenticator = SoftwareAuthenticator(settings: settings)
    }

    init(_ server: TestServer, authenticator: SoftwareAuthenticator) {
        self.server = server
        self.authenticator = authenticator
    }

    /// `/passkey/register`, then the authenticator; returns the session and the credential JSON.
    func startSignUp(email: String, name: String? = "Ada", tamper: Tamper = .none) throws -> (session: String, credential: JSONValue) {
        var profile: JSONObject = ["email": .string(email)]
        if let name { profile["name"] = .string(name) }
        let (status, json) = try server.post("/passkey/register", .object(["client_id": .string(clientID), "user_profile": .object(profile)]))
        try #require(status == 200, "register: \(json.serialized)")
        let options = try #require(json["authn_params_public_key"])
        let challenge = try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let handle = try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) })
        let response = try authenticator.register(
            rpID: TestServer.rpID, origin: origin, challenge: challenge, userHandle: handle, userName: email, tamper: tamper)
        return (try #require(json["auth_session"]?.string), response.json)
    }

    /// `/passkey/challenge`, then the authenticator.
    func startSignIn(username: String? = nil, tamper: Tamper = .none) throws -> (session: String, credential: JSONValue, options: JSONValue) {
        var body: JSONObject = ["client_id": .string(clientID)]
        if let username { body["username"] = .string(username) }
        let (status, json) = try server.post("/passkey/challenge", .object(body))
        try #require(status == 200, "challenge: \(json.serialized)")
        let options = try #require(json["authn_params_public_key"])
        let challenge = try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let allowed = (options["allowCredentials"]?.array ?? []).compactMap { $0["id"]?.string.flatMap { Base64URL.decode($0) } }
        let response = try authenticator.authenticate(rpID: TestServer.rpID, origin: origin, challenge: challenge, allowCredentials: allowed, tamper: tamper)
        return (try #require(json["auth_session"]?.string), response.json, options)
    }

    /// `/oauth/token` with the webauthn grant.
    func exchange(session: String, credential: JSONValue, clientID: String? = nil) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string(clientID ?? self.clientID),
            "auth_session": .string(session), "authn_response": credential,
        ]), headers: userAgent.map { [("User-Agent", $0)] } ?? [])
    }

    func signUp(email: String) throws -> JSONValue {
        let (session, credential) = try startSignUp(email: email)
        let (status, json) = try exchange(session: session, credential: credential)
        try #require(status == 200, "sign-up: \(json.serialized)")
        return json
    }

    func signIn(username: String? = nil) throws -> JSONValue {
        let (session, credential, _) = try startSignIn(username: username)
        let (status, json) = try exchange(session: session, credential: credential)
        try #require(status == 200, "sign-in: \(json.serialized)")
        return json
    }
}

/// A loopback port nothing listens on right now (the kernel picks it).
func freeLoopbackPort() -> UInt16 { (try? Loopback.freePort()) ?? 0 }

/// Whether `condition` holds within `timeout` seconds, asked every `interval` seconds: what a
/// test waits for, instead of sleeping for a guessed time.
func eventually(timeout: TimeInterval = 10, every interval: TimeInterval = 0.02, _ condition: () throws -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if (try? condition()) == true { return true }
        Thread.sleep(forTimeInterval: interval)
    } while Date() < deadline
    return (try? condition()) == true
}

/// Runs a program to its end: its exit status, standard output and standard error.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, in directory: URL? = nil) throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
}
