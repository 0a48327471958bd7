import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Synchronization
import SignetTestSupport
import Testing

/// A log stream's endpoint on a real socket: every POST it was sent, and the answers it is told
/// to give (200 once they run out).
final class StreamReceiver: HTTPHandler {
    struct Received {
        let path: String
        let contentType: String?
        let authorization: String?
        let body: [UInt8]
        /// `webhook-id`, `webhook-timestamp` and `webhook-signature`, when sent.
        var webhook: (id: String, timestamp: String, signature: String)?
    }
    let received = Mutex<[Received]>([])
    let answers = Mutex<[Int]>([])

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        var post = Received(path: request.path, contentType: request.header("content-type"), authorization: request.header("authorization"), body: request.body)
        if let id = request.header("webhook-id"), let timestamp = request.header("webhook-timestamp"), let signature = request.header("webhook-signature") {
            post.webhook = (id, timestamp, signature)
        }
        received.withLock { $0.append(post) }
        let status = answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
        return HTTPResponse(status: status, headers: status == 302 ? [("Location", "/followed")] : [], body: [])
    }

    var posts: [Received] { received.withLock { $0 } }

    /// Every item of every POST, in order, whatever the format.
    func items(_ format: String = "JSONARRAY") throws -> [JSONValue] {
        try posts.flatMap { post -> [JSONValue] in
            switch format {
            case "JSONLINES": return try post.body.split(separator: 0x0A).map { try StrictJSON().parse(Array($0)) }
            case "JSONOBJECT": return [try StrictJSON().parse(post.body)]
            default: return try StrictJSON().parse(post.body).array ?? []
            }
        }
    }
}

/// Log streams: the audit log POSTed to an operator's endpoint as it grows, in order, with
/// nothing lost while it fails, one instance at a time, and the header it carries never shown.
@Suite struct LogStreamTests {
    static let header = "Bearer stream-secret-0123456789"

    static func integer(_ value: JSONValue?) -> Int? {
        if case .number(let text)? = value { Int(text) } else { nil }
    }

    static func receiver() throws -> (server: HTTPServer, receiver: StreamReceiver, base: String) {
        let receiver = StreamReceiver()
        let (server, base) = try startLoopbackServer(receiver)
        return (server, receiver, base)
    }

    /// A server with operators whose own beat is paused: the test sends when it means to.
    static func operators(_ transport: TestServer.Transport = .inProcess, sharing: URL? = nil) throws -> (TestServer, String) {
        let server = try TestServer.withOperators(transport, sharing: sharing)
        server.app.pauseLogStreams()
        return (server, try server.managementToken())
    }

    static func add(_ server: TestServer, _ token: String, endpoint: String, format: String? = nil, authorization: String? = header) throws -> JSONValue {
        var sink: JSONObject = ["httpEndpoint": .string(endpoint)]
        if let format { sink["httpContentFormat"] = .string(format) }
        if let authorization { sink["httpAuthorization"] = .string(authorization) }
        let added = try server.api("POST", "/api/v2/log-streams", token: token, .object(["name": .string("siem"), "type": .string("http"), "sink": .object(sink)]))
        try #require(added.status == 201, "\(added.json.serialized)")
        return added.json
    }

    @Test("events go to the endpoint in order, with the header, as the log shows them; the header is never shown or logged")
    func delivers() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators(.socket)
        let stream = try Self.add(server, token, endpoint: base + "/in?tenant=a")
        let id = try #require(stream["id"]?.string)
        #expect(stream["type"] == .string("http") && stream["status"] == .string("active") && stream["signet_authorization"] == .bool(true))
        #expect(stream["sink"]?["httpContentFormat"] == .string("JSONARRAY") && stream["sink"]?["httpContentType"] == .string("application/json"))
        #expect(stream["sink"]?["httpAuthorization"] == nil && !stream.serialized.contains("stream-secret"))

        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@example.com")
        _ = try phone.signIn()
        #expect(server.app.sendLogStreamsNow() >= 3)
        let posts = receiver.posts
        try #require(posts.count == 1)
        #expect(posts[0].path == "/in" && posts[0].contentType == "application/json" && posts[0].authorization == Self.header)
        let items = try receiver.items()
        let events = items.compactMap { $0["data"]?["signet_event"]?.string }
        #expect(events.first == "admin_log_stream_added" && events.contains("sign_up") && events.contains("sign_in"), "\(events)")
        // The log's own IDs and shape, in order without a gap.
        let ids = items.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
        #expect(ids == Array(ids[0]...ids[0] + Int64(ids.count - 1)))
        #expect(items.allSatisfy { $0["log_id"] == $0["data"]?["log_id"] })
        let logs = try server.api("GET", "/api/v2/logs?from=\(ids[0] - 1)&take=100", token: token)
        #expect(logs.json.array?.map(\.serialized) == items.compactMap { $0["data"] }.map(\.serialized))
        // Delivered: nothing pending; nothing sent again.
        let read = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(read["signet_delivery"]?["last_log_id"] == .string(String(ids.last!)) && read["signet_delivery"]?["pending"] == .number("0"))
        #expect(read["signet_delivery"]?["failures"] == .number("0") && read["signet_delivery"]?["last_delivered_at"]?.string != nil)
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == 1)
        let listed = try server.api("GET", "/api/v2/log-streams", token: token)
        #expect(listed.json.array?.count == 1 && !listed.json.serialized.contains("stream-secret"))
        server.app.server.log.flush()
        #expect(try !String(contentsOf: server.logFile, encoding: .utf8).contains("stream-secret"))
    }

    @Test("a failing endpoint loses nothing: the same events again after a back-off that doubles, the error shown; a redirect is not followed")
    func failures() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let id = try #require(try Self.add(server, token, endpoint: base + "/in")["id"]?.string)
        _ = try Phone(server).signUp(email: "ada@example.com")
        receiver.answers.withLock { $0 = [503, 302] }
        #expect(server.app.sendLogStreamsNow() == 0)
        var read = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(read["signet_delivery"]?["failures"] == .number("1") && read["signet_delivery"]?["last_error"] == .string("the endpoint answered 503"))
        #expect(read["signet_delivery"]?["next_attempt_at"]?.string != nil)
        let pending = try #require(Self.integer(read["signet_delivery"]?["pending"]))
        #expect(pending >= 2)
        // Within the back-off: no POST.
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == 1)
        server.clock.advance(1.5)
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == 2)
        read = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(read["signet_delivery"]?["failures"] == .number("2") && read["signet_delivery"]?["last_error"] == .string("the endpoint answered 302"))
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_log_stream_failures{stream=\"\(id)\"} 2") && metrics.contains("signet_log_stream_pending_events{stream=\"\(id)\",status=\"active\"} \(pending)"))
        #expect(!receiver.posts.contains { $0.path == "/followed" })
        // The second failure waits 2 s, not 1.
        server.clock.advance(1.5)
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == 2)
        server.clock.advance(1)
        // What was pending, then, in the same pass, the event of the endpoint's return.
        #expect(server.app.sendLogStreamsNow() == pending + 1)
        let posts = receiver.posts
        // The same events each time, and after the first POST the event of its failure.
        try #require(posts.count == 4, "\(posts.count) POSTs")
        #expect(posts[1].body == posts[2].body)
        let first = try #require(try StrictJSON().parse(posts[0].body).array), again = try #require(try StrictJSON().parse(posts[2].body).array)
        #expect(Array(again.prefix(first.count)) == first && again.count == first.count + 1)
        #expect(again.last?["data"]?["type"] == .string("log_stream_delivery") && again.last?["data"]?.serialized.contains("503") == true, "\(again.last?.serialized ?? "")")
        read = try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json
        #expect(read["signet_delivery"]?["failures"] == .number("0") && read["signet_delivery"]?["last_error"] == nil)
        // One event when it stopped (not one a retry), one when it took events again, sent once.
        let told = try server.store.auditEvents(limit: 50).filter { $0.kind == "log_stream_delivery" }
        #expect(told.map(\.outcome) == ["success", "failure"], "\(told)")
        #expect(told.first?.detail == "stream \(id) takes events again after 2 failed POST(s)" && told.last?.detail == "stream \(id): the endpoint answered 503")
        let back = try #require(try StrictJSON().parse(posts[3].body).array)
        #expect(back.count == 1 && back.first?["data"]?["type"] == .string("log_stream_delivery"), "\(back)")
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == 4)
        #expect(try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json["signet_delivery"]?["pending"] == .number("0"))
    }

    @Test("JSONLINES: a line an event; JSONOBJECT: a POST an event; a content type of the operator's")
    func formats() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let lines = try #require(try Self.add(server, token, endpoint: base + "/lines", format: "JSONLINES", authorization: nil)["id"]?.string)
        #expect(try server.api("PATCH", "/api/v2/log-streams/\(lines)", token: token, .object(["sink": .object(["httpContentType": .string("application/x-ndjson")])])).status == 200)
        _ = try Self.add(server, token, endpoint: base + "/objects", format: "JSONOBJECT", authorization: nil)
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() > 0)
        let posts = receiver.posts
        let linePosts = posts.filter { $0.path == "/lines" }, objectPosts = posts.filter { $0.path == "/objects" }
        #expect(linePosts.count == 1 && linePosts[0].contentType == "application/x-ndjson" && linePosts[0].authorization == nil)
        let lineItems = try linePosts[0].body.split(separator: 0x0A).map { try StrictJSON().parse(Array($0)) }
        #expect(lineItems.count >= 3 && linePosts[0].body.last == 0x0A)
        // The object stream began after the line stream's change: every event since, one a POST.
        #expect(objectPosts.count >= 2 && objectPosts.allSatisfy { (try? StrictJSON().parse($0.body))?["log_id"] != nil })
        let objectIDs = objectPosts.compactMap { (try? StrictJSON().parse($0.body))?["log_id"]?.string }
        #expect(Array(lineItems.compactMap { $0["log_id"]?.string }.suffix(objectIDs.count)) == objectIDs)
    }

    @Test("paused, a stream sends nothing; active again, it sends what happened meanwhile; removed, it is gone; every change audited")
    func pauseAndRemove() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let id = try #require(try Self.add(server, token, endpoint: base + "/in")["id"]?.string)
        let paused = try server.api("PATCH", "/api/v2/log-streams/\(id)", token: token, .object(["status": .string("paused")]))
        #expect(paused.status == 200 && paused.json["status"] == .string("paused"))
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.isEmpty)
        // The header taken away and the stream on again: everything since its creation.
        let resumed = try server.api("PATCH", "/api/v2/log-streams/\(id)", token: token,
                                     .object(["status": .string("active"), "sink": .object(["httpAuthorization": .null])]))
        #expect(resumed.status == 200 && resumed.json["signet_authorization"] == .bool(false))
        #expect(server.app.sendLogStreamsNow() > 0)
        let events = try receiver.items().compactMap { $0["data"]?["signet_event"]?.string }
        #expect(events.first == "admin_log_stream_added" && events.contains("sign_up") && events.filter { $0 == "admin_log_stream_updated" }.count == 2, "\(events)")
        #expect(receiver.posts.allSatisfy { $0.authorization == nil })
        let updated = try server.api("GET", "/api/v2/logs?q=signet_event:%22admin_log_stream_updated%22&take=10", token: token).json.array ?? []
        #expect(updated.contains { $0["description"]?.string == "log stream \(id): status, authorization" })
        #expect(!(try server.api("GET", "/api/v2/logs?take=100", token: token).json.serialized.contains("stream-secret")))

        #expect(try server.api("DELETE", "/api/v2/log-streams/\(id)", token: token).status == 204)
        let gone = try server.api("GET", "/api/v2/log-streams/\(id)", token: token)
        #expect(gone.status == 404 && gone.json["reason"] == .string("log_stream_not_found"))
        #expect(try server.api("DELETE", "/api/v2/log-streams/\(id)", token: token).json["reason"] == .string("log_stream_not_found"))
        #expect(try server.api("GET", "/api/v2/log-streams", token: token).json == .array([]))
        let sent = receiver.posts.count
        _ = try Phone(server).signUp(email: "bob@example.com")
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.count == sent)
    }

    @Test("bad settings, a missing scope, an unknown stream and an eleventh stream are refused with their reasons, writing nothing")
    func refusals() throws {
        let (server, token) = try Self.operators()
        func refused(_ body: JSONValue, _ method: String = "POST", _ path: String = "/api/v2/log-streams") throws -> (Int, String?) {
            let answer = try server.api(method, path, token: token, body)
            return (answer.status, answer.json["reason"]?.string)
        }
        let good: JSONObject = ["name": .string("siem"), "sink": .object(["httpEndpoint": .string("https://siem.example/in")])]
        func with(_ key: String, _ value: JSONValue) -> JSONValue { var body = good; body[key] = value; return .object(body) }
        func sink(_ members: JSONObject) -> JSONValue {
            var fields: JSONObject = ["httpEndpoint": .string("https://siem.example/in")]
            for (name, value) in members { fields[name] = value }
            return with("sink", .object(fields))
        }
        let bad: [JSONValue] = [
            .string("not an object"), .object(["name": .string("siem")]), with("name", .string("")), with("name", .string(String(repeating: "n", count: 101))),
            with("type", .string("datadog")), with("status", .string("stopped")), with("filters", .string("auth.login.fail")), with("sink", .string("x")),
            .object(["name": .string("siem"), "sink": .object(["httpEndpoint": .string("http://siem.example/in")])]),
            .object(["name": .string("siem"), "sink": .object(["httpEndpoint": .string("https://siem.example/in#frag")])]),
            .object(["name": .string("siem"), "sink": .object(["httpEndpoint": .string("ftp://siem.example/in")])]),
            sink(["httpContentFormat": .string("XML")]), sink(["httpContentType": .string("json")]), sink(["httpContentType": .string("text/plain\r\nX-Evil: 1")]),
            sink(["httpAuthorization": .string("Bearer a\r\nX-Evil: 1")]), sink(["httpAuthorization": .string("")]), sink(["httpAuthorization": .number("1")]),
            sink(["httpAuthorization": .string(String(repeating: "a", count: 4097))]), sink(["httpAuthorization": .string("Bearer é")]), sink(["httpHeaders": .array([])]),
        ]
        for body in bad {
            let (status, reason) = try refused(body)
            #expect(status == 400 && reason == "malformed", "\(body.serialized.prefix(120)): \(status) \(reason ?? "-")")
        }
        #expect(try server.api("GET", "/api/v2/log-streams", token: token).json == .array([]))
        // Scopes: reading needs read:log_streams, making needs create:log_streams.
        let reader = try server.managementToken(scope: "read:log_streams")
        let noScope = try server.api("POST", "/api/v2/log-streams", token: reader, .object(good))
        #expect(noScope.status == 403 && noScope.json["reason"] == .string("insufficient_scope"))
        #expect(try server.api("GET", "/api/v2/log-streams", token: try server.managementToken(scope: "read:logs")).status == 403)
        #expect(try refused(.object(["name": .string("x")]), "PATCH", "/api/v2/log-streams/lst_none") == (404, "log_stream_not_found"))
        // Ten at most.
        for _ in 0..<10 { #expect(try server.api("POST", "/api/v2/log-streams", token: token, .object(good)).status == 201) }
        #expect(try refused(.object(good)) == (409, "conflict"))
        let id = try #require(try server.api("GET", "/api/v2/log-streams", token: token).json.array?.first?["id"]?.string)
        #expect(try refused(.object([:]), "PATCH", "/api/v2/log-streams/\(id)") == (400, "malformed"))
        #expect(try refused(.object(["type": .string("http")]), "PATCH", "/api/v2/log-streams/\(id)") == (400, "malformed"))
        #expect(try refused(.object(["status": .string("off")]), "PATCH", "/api/v2/log-streams/\(id)") == (400, "malformed"))
        #expect(try server.api("GET", "/api/v2/log-streams/\(id)", token: token).json["status"] == .string("active"))
    }

    @Test("two instances on one database: each event reaches the endpoint once, sent by the instance that holds the lease")
    func twoInstances() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (first, token) = try Self.operators()
        let (second, _) = try Self.operators(sharing: first.directory)
        _ = try Self.add(first, token, endpoint: base + "/in")
        let phone = Phone(second)
        for n in 0..<5 { _ = try phone.signUp(email: "u\(n)@example.com") }
        let sent = simultaneously(2) { i in (i == 0 ? first : second).app.sendLogStreamsNow() }
        let total = sent.compactMap { try? $0.get() }.reduce(0, +)
        let ids = try receiver.items().compactMap { $0["log_id"]?.string }
        #expect(ids.count == total && Set(ids).count == ids.count && total >= 6, "\(ids)")
        // The lease holds for 20 s: the other instance sends nothing new meanwhile, and takes over after.
        _ = try Phone(first, authenticator: phone.authenticator).signIn(username: "u0@example.com")
        let holder = ((try? sent[0].get()) ?? 0) > 0 ? first : second, other = holder === first ? second : first
        #expect(other.app.sendLogStreamsNow() == 0)
        other.clock.advance(Double(Ceremonies.logStreamLease) / 1000 + 1)
        #expect(other.app.sendLogStreamsNow() >= 1)
        let all = try receiver.items().compactMap { $0["log_id"]?.string }
        #expect(Set(all).count == all.count)
    }

    @Test("a re-key seals each stream's header and signing secret again: a server with the new key sends the same header, signed under the same secret, and none is left under the old key")
    func rekey() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (first, token) = try Self.operators()
        let added = try Self.add(first, token, endpoint: base + "/in")
        let (id, secret) = (try #require(added["id"]?.string), try #require(added["signet_signing_secret"]?.string))
        _ = try Self.add(first, token, endpoint: base + "/bare", authorization: nil)
        let old = try RekeyTests.kek(first), new = SecureRandom.bytes(32)
        let done = try KeyEncryptionKey.rekey(store: first.store, from: old, to: new)
        #expect(done.logStreams == 2)
        let material = try first.store.sealedMaterial()
        let sealed = try #require(material.logStreamAuthorizations[id])
        #expect(throws: (any Error).self) { try AESGCM.open(sealed, key: KeyEncryptionKey.logStreamKey(old), aad: Array(id.utf8)) }
        #expect(material.logStreamSigning.count == 2)
        for (stream, secrets) in material.logStreamSigning {
            let aad = LogStreamSigning.associatedData(streamID: stream)
            #expect(throws: (any Error).self) { try AESGCM.open(secrets, key: KeyEncryptionKey.logStreamKey(old), aad: aad) }
            #expect(try AESGCM.open(secrets, key: KeyEncryptionKey.logStreamKey(new), aad: aad).count == LogStreamSigning.secretBytes)
        }
        try RekeyTests.install(new, in: first)
        // Its own beat may send before the test does: either way, what arrives is what counts.
        let second = try TestServer(sharing: first.directory)
        second.app.pauseLogStreams()
        _ = second.app.sendLogStreamsNow()
        #expect(eventually { receiver.posts.contains { $0.path == "/in" } && receiver.posts.contains { $0.path == "/bare" } })
        let posts = receiver.posts
        #expect(posts.filter { $0.path == "/in" }.allSatisfy { $0.authorization == Self.header } && posts.contains { $0.path == "/in" })
        #expect(posts.filter { $0.path == "/bare" }.allSatisfy { $0.authorization == nil })
        #expect(try posts.filter { $0.path == "/in" }.allSatisfy { try LogStreamSigningTests.verifies($0, secret) })
    }

    @Test("signet admin log-streams: add with the header from a file, list, pause, remove; the header is never printed, a running server sends it")
    func commandLine() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, _) = try Self.operators()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func admin(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "log-streams"] + arguments + database, in: server.directory)
        }
        let file = server.directory.appendingPathComponent("siem.header")
        try Data((Self.header + "\n").utf8).write(to: file)
        let added = try admin(["add", "--name", "siem", "--url", base + "/in", "--format", "JSONLINES", "--authorization-file", file.path, "--json"])
        #expect(added.status == 0, "\(added.errors)")
        let id = try #require(try OperationsTests.json(added.output)["id"]?.string)
        let listed = try admin(["list"])
        #expect(listed.status == 0 && listed.output.contains(id) && listed.output.contains("JSONLINES") && listed.output.contains("1 log stream(s)"))
        #expect(!(added.output + listed.output + listed.errors).contains("stream-secret"))
        _ = try Phone(server).signUp(email: "ada@example.com")
        #expect(server.app.sendLogStreamsNow() > 0)
        #expect(receiver.posts.first?.authorization == Self.header && receiver.posts.first?.contentType == "application/json")
        // The signing secret: in the answer that made it, and in no other output.
        let secret = try #require(try OperationsTests.json(added.output)["signet_signing_secret"]?.string)
        #expect(try receiver.posts.allSatisfy { try LogStreamSigningTests.verifies($0, secret) })
        #expect(try !listed.output.contains("whsec_") && !admin(["list", "--json"]).output.contains("whsec_"))
        let rotated = try admin(["rotate-secret", id, "--previous-secret-seconds", "60"])
        #expect(rotated.status == 0 && rotated.output.contains("rotated the signing secret of log stream \(id)") && rotated.output.contains("signed"), "\(rotated.output)")
        #expect(rotated.output.contains("the previous signing secret signs too until "))
        let signedColumn = try admin(["list"]).output
        #expect(signedColumn.contains("SIGNED") && signedColumn.contains("yes, both until "), "\(signedColumn)")
        let line = try #require(rotated.output.split(separator: "\n").first { $0.hasPrefix("signing secret  whsec_") })
        let next = String(line.dropFirst("signing secret  ".count).prefix { $0 != " " })
        #expect(try next != secret && LogStreamSigningTests.bytes(next).count == 32)
        // The rotation's own event goes signed under both.
        #expect(server.app.sendLogStreamsNow() > 0)
        #expect(try receiver.posts.last.map { try LogStreamSigningTests.verifies($0, next) && LogStreamSigningTests.verifies($0, secret) } == true)
        #expect(try admin(["rotate-secret", id, "--previous-secret-seconds", "a day"]).status == 2)
        #expect(try admin(["rotate-secret", id, "--previous-secret-seconds", "604801"]).status == 2)
        #expect(try admin(["rotate-secret", "lst_none"]).status == 1)
        // Refusals exit 2 and change nothing.
        #expect(try admin(["update", id, "--authorization-file", file.path, "--no-authorization"]).status == 2)
        #expect(try admin(["update", id, "--status", "stopped"]).status == 2)
        #expect(try admin(["add", "--name", "x", "--url", "http://siem.example/in"]).status == 2)
        #expect(try admin(["update", "lst_none", "--status", "paused"]).status == 1)
        #expect(try admin(["update", id, "--filter", "auth.login.fail", "--all-events"]).status == 2)
        #expect(try admin(["update", id, "--filter", "auth.login.failure"]).status == 2)
        let filtered = try admin(["update", id, "--filter", "auth.login.fail", "--filter", "management.fail"])
        #expect(filtered.status == 0 && filtered.output.contains("only auth.login.fail, management.fail"), "\(filtered.output)")
        #expect(try admin(["list"]).output.contains("auth.login.fail,management.fail"))
        #expect(try admin(["update", id, "--all-events"]).status == 0 && !(try admin(["list"]).output.contains("auth.login.fail")))
        let paused = try admin(["update", id, "--status", "paused", "--no-authorization"])
        #expect(paused.status == 0 && paused.output.contains("paused") && !paused.output.contains("Authorization"), "\(paused.output)")
        #expect(try admin(["remove", id]).output.contains("removed log stream \(id)"))
        let none = try OperationsTests.json(try admin(["list", "--json"]).output)
        #expect(none == .array([]))
        let trail = try server.api("GET", "/api/v2/logs?take=20", token: try server.managementToken()).json.array ?? []
        let kinds = trail.compactMap { $0["signet_event"]?.string }
        #expect(kinds.contains("admin_log_stream_added") && kinds.contains("admin_log_stream_updated") && kinds.contains("admin_log_stream_removed"))
        #expect(trail.first { $0["signet_event"] == .string("admin_log_stream_added") }?["client_id"] == .string("signet-admin"))
    }

    @Test("nothing goes before it is on disk: while the WAL's syncs fail, no POST; once they work, every event")
    func durableFirst() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let sql = try #require(server.app.store as? SQLStore)
        try #require(sql.defersDurability, "the test server's SQLite is durable")
        _ = try Self.add(server, token, endpoint: base + "/in")
        sql.failSyncs(true)
        #expect(server.app.sendLogStreamsNow() == 0 && receiver.posts.isEmpty)
        sql.failSyncs(false)
        #expect(server.app.sendLogStreamsNow() >= 1 && receiver.posts.count == 1)
    }

    @Test("filters: only the events of the stream's categories go; the stream moves past the others without a POST; null sends every event again")
    func filters() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let body: JSONValue = .object(["name": .string("failures"), "sink": .object(["httpEndpoint": .string(base + "/failures")]),
                                       "filters": .array(["auth.login.fail", "management.success"].map { .object(["type": .string("category"), "name": .string($0)]) })])
        let added = try server.api("POST", "/api/v2/log-streams", token: token, body)
        #expect(added.status == 201 && added.json["filters"]?.array?.compactMap { $0["name"]?.string } == ["auth.login.fail", "management.success"], "\(added.json.serialized)")
        let id = try #require(added.json["id"]?.string)
        let quiet = try server.api("POST", "/api/v2/log-streams", token: token, .object([
            "name": .string("system"), "sink": .object(["httpEndpoint": .string(base + "/system")]),
            "filters": .array([.object(["type": .string("category"), "name": .string("system.notification")])]),
        ]))
        let quietID = try #require(quiet.json["id"]?.string)
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@example.com")
        _ = try phone.signIn()
        var tampered = Tamper()
        tampered.signature = { $0[$0.count - 1] ^= 1 }
        let (session, credential, _) = try phone.startSignIn(tamper: tampered)
        #expect(try phone.exchange(session: session, credential: credential).status == 400)
        #expect(server.app.sendLogStreamsNow() == 3)
        let posts = receiver.posts
        #expect(posts.allSatisfy { $0.path == "/failures" } && posts.count == 1, "\(posts.map(\.path))")
        let sent = try receiver.items().map { "\($0["data"]?["signet_event"]?.string ?? "?")/\($0["data"]?["outcome"]?.string ?? "?")" }
        #expect(sent == ["admin_log_stream_added/success", "admin_log_stream_added/success", "sign_in/failure"], "\(sent)")
        // Both streams have moved past everything, the quiet one without a POST.
        for stream in [id, quietID] {
            let read = try server.api("GET", "/api/v2/log-streams/\(stream)", token: token).json
            #expect(read["signet_delivery"]?["pending"] == .number("0"), "\(read.serialized)")
        }
        // Unknown and repeated categories, and other shapes, are refused.
        for filters: JSONValue in [.array([.object(["type": .string("category"), "name": .string("auth.login.failure")])]),
                                   .array([.object(["type": .string("category"), "name": .string("user.fail")]), .object(["type": .string("category"), "name": .string("user.fail")])]),
                                   .array([.object(["type": .string("event"), "name": .string("sign_in")])]), .string("auth.login.fail"),
                                   .array([.object(["type": .string("category"), "name": .string("user.fail"), "extra": .bool(true)])])] {
            let refused = try server.api("PATCH", "/api/v2/log-streams/\(id)", token: token, .object(["filters": filters]))
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(filters.serialized)")
        }
        // null: every event again, from here on.
        let all = try server.api("PATCH", "/api/v2/log-streams/\(id)", token: token, .object(["filters": .null]))
        #expect(all.status == 200 && all.json["filters"] == .array([]))
        _ = try phone.signIn()
        #expect(server.app.sendLogStreamsNow() >= 2)
        let later = try receiver.items().dropFirst(3).compactMap { $0["data"]?["signet_event"]?.string }
        #expect(later.contains("sign_in") && later.contains("admin_log_stream_updated"), "\(later)")
        #expect(receiver.posts.allSatisfy { $0.path == "/failures" })
    }

    @Test("every kind of event has a category Auth0 names, and each group's success and failure go to its two")
    func categories() {
        for kind in AuditKind.allCases {
            for outcome in ["success", "failure"] {
                #expect(AuditKind.streamCategories.contains(kind.streamCategory(outcome: outcome)), "\(kind) \(outcome)")
            }
        }
        #expect(AuditKind.signIn.streamCategory(outcome: "failure") == "auth.login.fail" && AuditKind.signUp.streamCategory(outcome: "success") == "auth.signup.success")
        #expect(AuditKind.adminUserBlocked.streamCategory(outcome: "success") == "management.success" && AuditKind.refresh.streamCategory(outcome: "failure") == "auth.token_exchange.fail")
        #expect(AuditKind.possibleClonedAuthenticator.streamCategory(outcome: "failure") == "auth.login.notification")
        #expect(AuditKind.allCases.filter(\.byOperator).allSatisfy { $0.streamCategory(outcome: "success") == "management.success" })
    }

    @Test("resend: every event after a log_id goes again, in order; never forward; audited")
    func resend() throws {
        let (listener, receiver, base) = try Self.receiver()
        defer { listener.stop() }
        let (server, token) = try Self.operators()
        let id = try #require(try Self.add(server, token, endpoint: base + "/in")["id"]?.string)
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@example.com")
        _ = try phone.signIn()
        #expect(server.app.sendLogStreamsNow() >= 3)
        let first = try receiver.items().compactMap { $0["log_id"]?.string }
        let rewound = try server.api("POST", "/api/v2/log-streams/\(id)/resend", token: token, .object(["after": .string(first[0])]))
        #expect(rewound.status == 200 && rewound.json["signet_delivery"]?["last_log_id"] == .string(first[0]), "\(rewound.json.serialized)")
        #expect(server.app.sendLogStreamsNow() >= first.count - 1)
        let again = try receiver.items().compactMap { $0["log_id"]?.string }.dropFirst(first.count)
        // The events after it, again and in order, then the resend's own audit row.
        #expect(Array(again.prefix(first.count - 1)) == Array(first.dropFirst()) && again.count == first.count, "\(first) then \(again)")
        let last = try #require(again.last)
        for (body, reason) in [(JSONValue.object(["after": .string(String(Int64(last)! + 1))]), "malformed"), (.object(["after": .string("x")]), "malformed"),
                               (.object(["after": .string("1"), "more": .bool(true)]), "malformed"), (.object([:]), "malformed")] {
            let refused = try server.api("POST", "/api/v2/log-streams/\(id)/resend", token: token, body)
            #expect(refused.status == 400 && refused.json["reason"] == .string(reason), "\(body.serialized)")
        }
        #expect(try server.api("POST", "/api/v2/log-streams/lst_none/resend", token: token, .object(["after": .string("1")])).json["reason"] == .string("log_stream_not_found"))
        #expect(try server.store.auditEvents(limit: 10).contains { $0.detail == "log stream \(id): resend after \(first[0])" })
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let cli = try OperationsTests.signet(["admin", "log-streams", "resend", id, "--after", first[0]] + database, in: server.directory)
        #expect(cli.status == 0 && cli.output.contains("rewound log stream \(id)"), "\(cli.output)\(cli.errors)")
        #expect(try OperationsTests.signet(["admin", "log-streams", "resend", id] + database, in: server.directory).status == 2)
    }

    @Test("an event ID not there yet is waited for, then taken as never written; a gap later in a batch ends the batch")
    func gaps() {
        let wait = Ceremonies.logStreamGapWait
        #expect(Ceremonies.deliverable([], after: 10, gapSince: nil, now: 0) == (0, nil))
        #expect(Ceremonies.deliverable([11, 12, 13], after: 10, gapSince: nil, now: 0) == (3, nil))
        #expect(Ceremonies.deliverable([11, 12, 14], after: 10, gapSince: nil, now: 0) == (2, nil))
        #expect(Ceremonies.deliverable([12, 13], after: 10, gapSince: nil, now: 1_000) == (0, 1_000))
        #expect(Ceremonies.deliverable([12, 13], after: 10, gapSince: 1_000, now: 1_000 + wait - 1) == (0, 1_000))
        #expect(Ceremonies.deliverable([12, 13, 15], after: 10, gapSince: 1_000, now: 1_000 + wait) == (2, nil))
    }
}
