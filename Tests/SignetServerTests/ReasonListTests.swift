import Foundation
import SignetAPI
import SignetAuth
import SignetClient
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// SignetAPI's ``Reason`` is the one list of failure reasons: the server answers with it, the
/// SDK's codes are it, the README's table is it, and the WebAuthn core's reasons are in it.
@Suite struct ReasonListTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The README table as the list makes it.
    static var table: String {
        var lines = ["| reason | status | `error` | what it means |", "| --- | --- | --- | --- |"]
        for reason in Reason.serverReasons {
            lines.append("| `\(reason.rawValue)` | \(reason.status) | `\(reason.error)` | \(reason.text) |")
        }
        return lines.joined(separator: "\n")
    }

    @Test("the README's table of reasons is the list, row for row")
    func readme() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- reasons -->\n"), "README.md has no <!-- reasons --> table")
        let end = try #require(readme.range(of: "\n<!-- /reasons -->", range: start.upperBound..<readme.endIndex))
        let written = String(readme[start.upperBound..<end.lowerBound])
        if written != Self.table {
            // The table to paste, for whoever changed the list.
            try? Self.table.write(to: Self.root.appendingPathComponent(".build/reasons-table.md"), atomically: true, encoding: .utf8)
        }
        #expect(written == Self.table, "README.md's reason table differs from SignetAPI's list; the list's table is in .build/reasons-table.md")
    }

    @Test("every reason the WebAuthn core can give is in the list, and the core's own list is complete")
    func webAuthnReasons() throws {
        for reason in WebAuthnError.Reason.all { #expect(Reason(rawValue: reason.rawValue)?.isServerReason == true, "\(reason) is missing") }
        let source = try String(contentsOf: Self.root.appendingPathComponent("Sources/SignetWebAuthn/WebAuthnError.swift"), encoding: .utf8)
        let declared = source.components(separatedBy: "= Reason(rawValue:").count - 1
        #expect(declared == WebAuthnError.Reason.all.count)
    }

    @Test("codes are unique, texts are sentences, and every status is a 4xx or 5xx")
    func shape() {
        #expect(Set(Reason.allCases.map(\.rawValue)).count == Reason.allCases.count)
        for reason in Reason.serverReasons {
            #expect((400..<600).contains(reason.status), "\(reason)")
            #expect(reason.text.hasSuffix(".") && reason.text.first?.isUppercase == true, "\(reason)")
        }
    }

    @Test("the SDK's codes are the list: a server answer's reason is its SignetError code; an unknown one keeps its text")
    func sdkCodes() {
        for reason in Reason.serverReasons {
            #expect(SignetError(serverReason: reason.rawValue, status: reason.status, "x").code == reason)
        }
        let newer = SignetError(serverReason: "from_a_newer_server", status: 400, "x")
        #expect(newer.code == .unrecognized && newer.serverReason == "from_a_newer_server")
    }

    @Test("error_description is the reason's text, never the verification's detail; the detail goes to the audit row")
    func noDetailToClients() throws {
        let server = try TestServer()
        var phone = Phone(server)
        _ = try phone.signUp(email: "detail@signet.test")
        phone.origin = "https://evil.example"
        let (session, credential, _) = try phone.startSignIn()
        let (status, json) = try phone.exchange(session: session, credential: credential)
        #expect(status == 400 && json["reason"] == .string("origin_not_allowed"))
        #expect(json["error_description"] == .string(Reason.originNotAllowed.text))
        #expect(json["error_description"]?.string?.contains("evil") == false)
        let event = try #require(try server.store.auditEvents(limit: 1).first)
        #expect(event.reason == "origin_not_allowed" && event.detail?.contains("https://evil.example") == true)
    }

    @Test("a refusal's detail is in the access log line, the answer says only the reason's text")
    func detailInAccessLog() throws {
        let server = try TestServer(.socket)
        let response = try server.client().send("POST", "/passkey/register", body: Array(#"{"client_id":"nobody","user_profile":{"email":"a@b.c"}}"#.utf8))
        #expect(response.status == 401)
        let requestID = try #require(response.headers["x-request-id"])
        var line = ""
        #expect(eventually {
            line = try String(contentsOf: server.logFile, encoding: .utf8).split(separator: "\n").first { $0.contains(requestID) }.map(String.init) ?? ""
            return !line.isEmpty
        })
        #expect(line.contains(#""detail":"client_unknown: unknown client_id \"nobody\"""#), "\(line)")
        #expect(try StrictJSON().parse(response.body)["error_description"] == .string(Reason.clientUnknown.text))
    }

    @Test("404, 405 and 413 answer a browser with a page and an API client with JSON")
    func answersFollowTheRequestsKind() throws {
        let server = try TestServer(.socket)
        let page = [("Accept", "text/html,application/xhtml+xml")]
        for (method, path, status) in [("GET", "/nowhere", 404), ("DELETE", "/oauth/token", 405)] {
            let html = try server.client().send(method, path, headers: page)
            #expect(html.status == status && html.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(html.text.contains(#"data-testid="error""#))
            let json = try server.client().send(method, path)
            #expect(json.status == status && json.headers["content-type"] == "application/json")
        }
        let big = try server.client().send("POST", "/passkey/register", headers: page, body: [UInt8](repeating: 0x20, count: 64 * 1024 + 1))
        #expect(big.status == 413 && big.text.contains("body_too_large") && big.headers["content-type"]?.hasPrefix("text/html") == true)
        let bigJSON = try server.client().send("POST", "/passkey/register", body: [UInt8](repeating: 0x20, count: 64 * 1024 + 1))
        #expect(try bigJSON.status == 413 && StrictJSON().parse(bigJSON.body)["reason"] == .string("body_too_large"))
    }

    @Test("HEAD is answered as GET without the body, pages and JSON alike; a 405 names the methods the path takes in Allow, and OPTIONS answers with them")
    func headAndAllow() throws {
        let server = try TestServer(.socket)
        for path in ["/healthz", "/.well-known/jwks.json", "/login", "/assets/signet.css"] {
            let get = try server.client().send("GET", path)
            let raw = try HTTPConnectionTests.RawSocket(port: server.port)
            raw.send("HEAD \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let head = try #require(raw.readToEnd(), "HEAD \(path) was not closed")
            #expect(head.hasPrefix("HTTP/1.1 \(get.status) ") && head.hasSuffix("\r\n\r\n"), "HEAD \(path): \(head)")
            #expect(head.contains("Content-Length: \(get.body.count)\r\n") && head.contains("Content-Type: \(get.headers["content-type"] ?? "-")\r\n"), "HEAD \(path): \(head)")
        }
        for (method, path, allow) in [("DELETE", "/oauth/token", "POST"), ("HEAD", "/oauth/token", "POST"), ("POST", "/healthz", "GET, HEAD"), ("PUT", "/me/passkeys/abc", "PATCH, DELETE")] {
            let raw = try HTTPConnectionTests.RawSocket(port: server.port)
            raw.send("\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            let answer = try #require(raw.readToEnd())
            #expect(answer.hasPrefix("HTTP/1.1 405 ") && answer.contains("\r\nAllow: \(allow)\r\n"), "\(method) \(path): \(answer)")
            #expect(method == "HEAD" ? answer.hasSuffix("\r\n\r\n") : answer.contains(#""reason":"method_not_allowed""#), "\(method) \(path): \(answer)")
        }
        // OPTIONS without an Origin (not a CORS preflight): what the path takes, or the server.
        for (path, allow) in [("/oauth/token", "POST, OPTIONS"), ("/me/passkeys/abc", "PATCH, DELETE, OPTIONS"), ("*", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")] {
            let raw = try HTTPConnectionTests.RawSocket(port: server.port)
            raw.send("OPTIONS \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let answer = try #require(raw.readToEnd())
            #expect(answer.hasPrefix("HTTP/1.1 204 ") && answer.contains("\r\nAllow: \(allow)\r\n"), "OPTIONS \(path): \(answer)")
        }
        let nowhere = try HTTPConnectionTests.RawSocket(port: server.port)
        nowhere.send("OPTIONS /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try #require(nowhere.readToEnd()).hasPrefix("HTTP/1.1 404 "))
    }
}
