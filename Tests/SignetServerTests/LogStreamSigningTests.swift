import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Synchronization
import Testing

/// Log streams' POSTs signed as Standard Webhooks signs them: a secret made with the stream and
/// shown once, the three headers on each POST, the same ID when the same events go again, and a
/// rotation in which the old secret signs beside the new one for a while.
@Suite struct LogStreamSigningTests {
    /// The secret's bytes, from `whsec_` and its base64.
    static func bytes(_ secret: String) throws -> [UInt8] {
        try #require(secret.hasPrefix("whsec_"), "\(secret)")
        return try #require(Data(base64Encoded: String(secret.dropFirst(6))).map { Array($0) })
    }

    /// Whether one of the POST's signatures is the HMAC-SHA256 of `id.timestamp.body` under
    /// `secret` (the endpoint's check, without the time).
    static func verifies(_ post: StreamReceiver.Received, _ secret: String, body: [UInt8]? = nil) throws -> Bool {
        let webhook = try #require(post.webhook)
        let signed = Array("\(webhook.id).\(webhook.timestamp).".utf8) + (body ?? post.body)
        let expected = "v1," + Data(Digest.sha256.hmac(key: try bytes(secret), data: signed)).base64EncodedString()
        return webhook.signature.split(separator: " ").contains { $0 == expected }
    }

    static func rotate(_ server: TestServer, _ token: String, _ id: String, _ body: JSONValue? = nil) throws -> JSONValue {
        let rotated = try server.api("POST", "/api/v2/log-streams/\(id)/rotate-secret", token: token, body)
        try #require(rotated.status == 200, "\(rotated.json.serialized)")
        return rotated.json
    }

    @Test("each POST carries webhook-id, webhook-timestamp and a signature under the secret shown once; another body or secret does not verify")
    func signs() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let (server, token) = try LogStreamTests.operators()
        let added = try LogStreamTests.add(server, token, endpoint: base + "/in")
        let (id, secret) = (try #require(added["id"]?.string), try #require(added["signet_signing_secret"]?.string))
        #expect(try Self.bytes(secret).count == 32 && added["signet_signed"] == .bool(true) && added["signet_previous_secret_until"] == nil)
        let encoded = String(secret.dropFirst(6))
        // Shown that once: no read, list or log has it.
        for path in ["/api/v2/log-streams", "/api/v2/log-streams/\(id)"] {
            let read = try server.api("GET", path, token: token).json.serialized
            #expect(!read.contains(encoded) && !read.contains("signet_signing_secret") && read.contains("\"signet_signed\":true"), "\(read)")
        }
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() >= 2)
        let post = try #require(receiver.posts.first)
        let webhook = try #require(post.webhook)
        let ids = try receiver.items().compactMap { $0["log_id"]?.string }
        // The ID names the stream and the range of the log the POST accounts for.
        #expect(webhook.id == "\(id)-\(ids.first ?? "")-\(ids.last ?? "")", "\(webhook.id) \(ids)")
        let sent = try #require(Int64(webhook.timestamp))
        #expect(abs(sent - Int64(server.clock.now.timeIntervalSince1970)) <= 2)
        #expect(webhook.signature.split(separator: " ").count == 1 && webhook.signature.hasPrefix("v1,"))
        #expect(try Self.verifies(post, secret))
        #expect(try !Self.verifies(post, secret, body: post.body + [0x20]))
        #expect(try !Self.verifies(post, LogStreamSigning.encoded(SecureRandom.bytes(32))))
        server.app.server.log.flush()
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(!log.contains(encoded) && !log.contains(webhook.signature.dropFirst(3)))
        #expect(try server.store.auditEvents(limit: 20).allSatisfy { !($0.detail ?? "").contains(encoded) })
    }

    @Test("the same events sent again after a failure: the same webhook-id, a new timestamp, and a signature that verifies")
    func retried() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let (server, token) = try LogStreamTests.operators()
        let secret = try #require(try LogStreamTests.add(server, token, endpoint: base + "/in")["signet_signing_secret"]?.string)
        _ = try Phone(server).signUp(email: "ada@example.com")
        receiver.answers.withLock { $0 = [503, 503] }
        _ = server.app.sendLogStreamsNow()
        server.clock.advance(1.5)
        _ = server.app.sendLogStreamsNow()
        server.clock.advance(2.5)
        #expect(server.app.sendLogStreamsNow() > 0)
        // The third POST took them; a fourth carried the event of the endpoint's return.
        let posts = receiver.posts
        try #require(posts.count == 4)
        // The second and third carry the same events (the first failure's event joined them).
        let (second, third) = (try #require(posts[1].webhook), try #require(posts[2].webhook))
        #expect(posts[1].body == posts[2].body && second.id == third.id && second.timestamp != third.timestamp && second.signature != third.signature)
        #expect(try posts.allSatisfy { try Self.verifies($0, secret) })
        #expect(posts[0].webhook?.id != second.id)
    }

    @Test("a rotation: the new secret shown once; both sign until the overlap ends, then only the new; with no overlap the old stops at once")
    func rotation() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        var (server, token) = try LogStreamTests.operators()
        let added = try LogStreamTests.add(server, token, endpoint: base + "/in")
        let (id, first) = (try #require(added["id"]?.string), try #require(added["signet_signing_secret"]?.string))
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@example.com")
        func nextPost() throws -> StreamReceiver.Received {
            let before = receiver.posts.count
            _ = try phone.signIn()
            #expect(server.app.sendLogStreamsNow() > 0)
            return try #require(receiver.posts.dropFirst(before).last)
        }

        let rotated = try Self.rotate(server, token, id)
        let second = try #require(rotated["signet_signing_secret"]?.string)
        #expect(second != first && rotated["signet_signed"] == .bool(true))
        let until = try #require(try server.store.logStreams().first?.signingPreviousUntil)
        #expect(rotated["signet_previous_secret_until"] == .string(Ceremonies.iso(until)))
        #expect(abs(Double(until) / 1000 - server.clock.now.timeIntervalSince1970 - 86_400) < 5)
        #expect(try !server.api("GET", "/api/v2/log-streams/\(id)", token: token).json.serialized.contains("signet_signing_secret"))
        var post = try nextPost()
        #expect(post.webhook?.signature.split(separator: " ").count == 2)
        #expect(try Self.verifies(post, first) && Self.verifies(post, second))

        // A day later the old one no longer signs.
        server.clock.advance(86_401)
        token = try server.managementToken()
        post = try nextPost()
        #expect(try post.webhook?.signature.split(separator: " ").count == 1 && Self.verifies(post, second) && !Self.verifies(post, first))
        #expect(try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json["signet_previous_secret_until"] == nil)

        // No overlap (a secret that leaked): only the new one, at once.
        let third = try #require(try Self.rotate(server, token, id, .object(["previous_secret_seconds": .number("0")]))["signet_signing_secret"]?.string)
        post = try nextPost()
        #expect(try Self.verifies(post, third) && !Self.verifies(post, second) && post.webhook?.signature.split(separator: " ").count == 1)

        // Two rotations in a row: the current one and the one just before it sign; the older is gone.
        let fourth = try #require(try Self.rotate(server, token, id, .object(["previous_secret_seconds": .number("600")]))["signet_signing_secret"]?.string)
        let fifth = try #require(try Self.rotate(server, token, id, .object(["previous_secret_seconds": .number("600")]))["signet_signing_secret"]?.string)
        post = try nextPost()
        #expect(try Self.verifies(post, fifth) && Self.verifies(post, fourth) && !Self.verifies(post, third))
        #expect(post.webhook?.signature.split(separator: " ").count == 2)

        // Each rotation audited, naming what happened and never a secret.
        let rotations = try server.store.auditEvents(limit: 100).filter { $0.kind == "admin_log_stream_updated" }.compactMap(\.detail)
        #expect(rotations.filter { $0.contains("signing secret rotated") }.count == 4, "\(rotations)")
        #expect(rotations.contains("log stream \(id): signing secret rotated, the previous one no longer signs"))
        #expect(rotations.contains("log stream \(id): signing secret rotated, the previous one signs too for 600 s"))
    }

    @Test("a stream from before signing posts unsigned, says so, and is signed from its first rotation on")
    func unsignedUntilRotated() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let (server, token) = try LogStreamTests.operators()
        let old = LogStreamRow(id: "lst_old", name: "old", status: "active", endpoint: base + "/old", contentType: "application/json", contentFormat: "JSONARRAY",
                               authorization: nil, createdAt: Int64(server.clock.now.timeIntervalSince1970 * 1000))
        _ = try server.store.insertLogStream(old, writes: [])
        #expect(try server.api("GET", "/api/v2/log-streams/lst_old", token: token).json["signet_signed"] == .bool(false))
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() > 0)
        #expect(receiver.posts.count == 1 && receiver.posts[0].webhook == nil)
        let rotated = try Self.rotate(server, token, "lst_old")
        let secret = try #require(rotated["signet_signing_secret"]?.string)
        #expect(rotated["signet_signed"] == .bool(true) && rotated["signet_previous_secret_until"] == nil)
        #expect(server.app.sendLogStreamsNow() > 0)
        let post = try #require(receiver.posts.last)
        #expect(try post.webhook?.signature.split(separator: " ").count == 1 && Self.verifies(post, secret))
    }

    @Test("rotate-secret refuses an overlap it cannot honour, another member, a stream that is not there, and a token without update:log_streams")
    func refusals() throws {
        let (listener, _, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let (server, token) = try LogStreamTests.operators()
        let id = try #require(try LogStreamTests.add(server, token, endpoint: base + "/in")["id"]?.string)
        let before = try server.store.logStreams()
        for body: JSONValue in [.object(["previous_secret_seconds": .number("-1")]), .object(["previous_secret_seconds": .number("604801")]),
                                .object(["previous_secret_seconds": .string("60")]), .object(["previous_secret_seconds": .number("1.5")]),
                                .object(["previous_secret_seconds": .number("1e3")]), .object(["overlap": .number("60")]), .array([]), .string("now")] {
            let refused = try server.api("POST", "/api/v2/log-streams/\(id)/rotate-secret", token: token, body)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(body.serialized): \(refused.json.serialized)")
        }
        let missing = try server.api("POST", "/api/v2/log-streams/lst_nothere/rotate-secret", token: token)
        #expect(missing.status == 404 && missing.json["reason"] == .string("log_stream_not_found"))
        let reader = try server.managementToken(scope: "read:log_streams")
        #expect(try server.api("POST", "/api/v2/log-streams/\(id)/rotate-secret", token: reader).status == 403)
        // Nothing changed by any of them.
        #expect(try server.store.logStreams() == before)
    }

    /// `scripts/log-stream-endpoint.py`: an endpoint that checks each POST with the
    /// `standardwebhooks` library, accepting the secrets the test gives it, and says what it saw.
    @Test("an endpoint that checks POSTs with the standardwebhooks library takes each one and refuses every alteration; through a rotation it needs only one of the secrets",
          .enabled(if: Self.libraryAvailable, "needs the venv with standardwebhooks that scripts/test.sh makes"))
    func standardWebhooks() throws {
        let (server, token) = try LogStreamTests.operators()
        let secrets = server.directory.appendingPathComponent("endpoint-secrets"), results = server.directory.appendingPathComponent("endpoint-results")
        let port = freeLoopbackPort()
        let script = WebBrowserTests.root.appendingPathComponent("scripts/log-stream-endpoint.py").path
        let endpoint = Process()
        endpoint.executableURL = URL(fileURLWithPath: WebBrowserTests.python)
        endpoint.arguments = [script, secrets.path, results.path, String(port)]
        let output = Pipe(), errors = Pipe()
        (endpoint.standardOutput, endpoint.standardError) = (output, errors)
        try Data().write(to: secrets)
        try endpoint.run()
        // SIGKILL, as MailSupport's: a child of the test process may inherit a mask that blocks SIGTERM.
        defer { kill(endpoint.processIdentifier, SIGKILL); endpoint.waitUntilExit() }
        let ready = output.fileHandleForReading.availableData
        try #require(String(decoding: ready, as: UTF8.self).hasPrefix("ready"), "\(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))")
        func accept(_ list: String...) throws { try Data(list.joined(separator: "\n").utf8).write(to: secrets) }
        func seen() throws -> [JSONValue] {
            try String(contentsOf: results, encoding: .utf8).split(separator: "\n").map { try StrictJSON().parse(Array($0.utf8)) }
        }

        let added = try LogStreamTests.add(server, token, endpoint: "http://127.0.0.1:\(port)/hook")
        let (id, first) = (try #require(added["id"]?.string), try #require(added["signet_signing_secret"]?.string))
        try accept(first)
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() >= 2)
        var all = try seen()
        #expect(all.count == 1 && all[0]["verified"] == .array([.number("0")]) && all[0]["signatures"] == .number("1"), "\(all.map(\.serialized))")
        for alteration in ["body", "id", "timestamp", "old", "secret"] { #expect(all[0]["refused"]?[alteration] == .bool(true), "\(alteration)") }

        // Rotated: the endpoint that knows only the new secret, or only the old one, takes the POST.
        let second = try #require(try Self.rotate(server, token, id)["signet_signing_secret"]?.string)
        for known in [second, first] {
            try accept(known)
            _ = try phone.signIn()
            #expect(server.app.sendLogStreamsNow() > 0)
            all = try seen()
            #expect(all.last?["verified"] == .array([.number("0")]) && all.last?["signatures"] == .number("2"), "\(all.last?.serialized ?? "")")
        }
        // Rotated with no overlap: an endpoint still on the old secret refuses, and the stream waits
        // with nothing lost until the endpoint has the new one.
        let third = try #require(try Self.rotate(server, token, id, .object(["previous_secret_seconds": .number("0")]))["signet_signing_secret"]?.string)
        try accept(second)
        _ = try phone.signIn()
        #expect(server.app.sendLogStreamsNow() == 0)
        let refused = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(try refused["signet_delivery"]?["last_error"] == .string("the endpoint answered 401") && seen().last?["error"] == .string("No matching signature found"))
        try accept(third)
        server.clock.advance(1.5)
        #expect(server.app.sendLogStreamsNow() > 0)
        #expect(try seen().last?["verified"] == .array([.number("0")]))
        #expect(try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json["signet_delivery"]?["pending"] == .number("0"))
        #expect(try seen().allSatisfy { $0["refused"] == nil || $0["refused"]?.object?.values.allSatisfy { $0 == .bool(true) } == true })
    }

    static var libraryAvailable: Bool {
        if ProcessInfo.processInfo.environment["SIGNET_REQUIRE_BROWSER"] == "1" { return true }
        return FileManager.default.isExecutableFile(atPath: WebBrowserTests.python)
            && (try? runProcess(WebBrowserTests.python, ["-c", "import standardwebhooks"]).status) == 0
    }

    @Test("a secret that does not open under this key-encryption key: no POST goes unsigned; the stream fails, saying why")
    func sealedUnderAnotherKey() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let (server, token) = try LogStreamTests.operators()
        let id = try #require(try LogStreamTests.add(server, token, endpoint: base + "/in")["id"]?.string)
        let before = try #require(try server.store.logStreams().first)
        var after = before
        after.signing = try AESGCM.seal(SecureRandom.bytes(32), key: SecureRandom.bytes(32), aad: LogStreamSigning.associatedData(streamID: id))
        #expect(try server.store.updateLogStream(after, expected: before, writes: []) == true)
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.isEmpty)
        let read = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(read["signet_delivery"]?["last_error"] == .string("its signing secret does not open under this key-encryption key"), "\(read.serialized)")
        // A rotation that would keep it is refused; one with no overlap mends the stream.
        let kept = try server.api("POST", "/api/v2/log-streams/\(id)/rotate-secret", token: token)
        #expect(kept.status == 409 && kept.json["reason"] == .string("conflict"))
        let secret = try #require(try Self.rotate(server, token, id, .object(["previous_secret_seconds": .number("0")]))["signet_signing_secret"]?.string)
        #expect(server.app.sendLogStreamsNow() > 0)
        #expect(try !receiver.posts.isEmpty && receiver.posts.allSatisfy { try Self.verifies($0, secret) })
    }
}
