import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import SignetTestSupport
import Testing

/// The claims of a JWT, unverified (the tests that verify signatures are elsewhere).
func jwtClaims(_ token: String?) -> JSONValue {
    guard let part = token?.split(separator: ".").dropFirst().first, let bytes = Base64URL.decode(String(part)) else { return .null }
    return (try? StrictJSON().parse(bytes)) ?? .null
}

/// DESIGN.md, "Email codes": Auth0's passwordless API over a real SMTP server.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct EmailCodeTests {
    @Test("a code by mail signs up a new address, then signs it in again: amr otp, email_verified, the same account")
    func signUpThenSignIn() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let (status, started) = try server.startEmail("new@signet.test")
        #expect(status == 200 && started["email"] == .string("new@signet.test") && started["email_verified"] == .bool(false) && started["_id"]?.string != nil)
        let code = try smtp.code(for: "new@signet.test")
        #expect(code.count == 6)
        let (granted, tokens) = try server.signIn(email: "new@signet.test", code: code, scope: "openid email offline_access")
        #expect(granted == 200, "\(tokens.serialized)")
        let access = jwtClaims(tokens["access_token"]?.string)
        let id = jwtClaims(tokens["id_token"]?.string)
        #expect(access["amr"] == .array([.string("otp")]) && access["cred"] == nil && access["sid"]?.string != nil)
        #expect(id["email_verified"] == .bool(true) && id["email"] == .string("new@signet.test"))
        #expect(access["acr"] == nil && id["acr"] == nil, "a code is not phishing-resistant")
        let user = try #require(try server.store.user(email: "new@signet.test"))
        #expect(user.emailVerified && access["sub"] == .string(user.id))
        // The code worked once.
        #expect(try server.signIn(email: "new@signet.test", code: code).json["reason"] == .string("otp_invalid"))
        // Again, later: the same account.
        server.clock.advance(31)
        try server.startEmail("new@signet.test")
        let second = try smtp.code(for: "new@signet.test", after: 1)
        // Typed in two groups, with a no-break space as a mail client may copy it.
        let typed = second.prefix(3) + "\u{00A0}" + second.dropFirst(3)
        let again = try server.signIn(email: "new@signet.test", code: String(typed))
        #expect(again.status == 200 && jwtClaims(again.json["access_token"]?.string)["sub"] == .string(user.id))
        #expect(server.counts["users"] == 1)
        // The refresh token from a code sign-in rotates like any other.
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"]),
        ]))
        #expect(refreshed.status == 200 && jwtClaims(refreshed.json["access_token"]?.string)["amr"] == .array([.string("otp")]))
        // The message itself: plain text, one recipient, the code and nothing to click.
        let message = try #require(smtp.messages(to: "new@signet.test").first)
        #expect(message.headers["content-type"] == "text/plain; charset=UTF-8" && message.subject.contains(code) && !message.body.contains("http"))
        #expect(message.headers["from"]?.contains("no-reply@signet.test") == true)
        // The outbox sealed it: no code ever sat in the database file in clear text.
        var db = try Data(contentsOf: server.directory.appendingPathComponent("signet.db"))
        db += (try? Data(contentsOf: server.directory.appendingPathComponent("signet.db-wal"))) ?? Data()
        #expect(db.range(of: Data("code: \(code)".utf8)) == nil && db.range(of: Data("X-Signet-Kind".utf8)) == nil)
    }

    @Test("an existing passkey account signs in by code; its unverified address becomes verified")
    func existingAccount() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "pk@signet.test")
        #expect(try server.store.user(email: "pk@signet.test")?.emailVerified == false)
        try server.startEmail("pk@signet.test")
        let (status, tokens) = try server.signIn(email: "pk@signet.test", code: try smtp.code(for: "pk@signet.test"))
        #expect(status == 200 && jwtClaims(tokens["access_token"]?.string)["sub"] == jwtClaims(account.access)["sub"])
        #expect(try server.store.user(email: "pk@signet.test")?.emailVerified == true)
    }

    @Test("an unknown address gets the same answer; with sign-up off no mail goes out and no account appears")
    func noEnumeration() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.passwordless.signup = false }
        _ = try SignedIn(server, email: "known@signet.test")
        let known = try server.startEmail("known@signet.test")
        let unknown = try server.startEmail("nobody@signet.test")
        #expect(known.status == 200 && unknown.status == 200)
        #expect(Set(known.json.object?.keys ?? []) == Set(unknown.json.object?.keys ?? []))
        #expect(known.json["email_verified"] == unknown.json["email_verified"])
        _ = try smtp.code(for: "known@signet.test")
        #expect(smtp.messages(to: "nobody@signet.test").isEmpty)
        // Throttled alike, too.
        #expect(try server.startEmail("known@signet.test").status == 429 && server.startEmail("nobody@signet.test").status == 429)
        #expect(try server.signIn(email: "nobody@signet.test", code: "123456").json["reason"] == .string("otp_invalid"))
        #expect(try server.store.user(email: "nobody@signet.test") == nil)
    }

    @Test("each refusal has its reason: wrong, expired, spent, another client's, malformed, disabled connection")
    func refusals() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        try server.startEmail("r@signet.test")
        let code = try smtp.code(for: "r@signet.test")
        let wrong = code == "000000" ? "111111" : "000000"
        let (status, json) = try server.signIn(email: "r@signet.test", code: wrong)
        #expect(status == 403 && json["error"] == .string("invalid_grant") && json["reason"] == .string("otp_invalid"))
        // Another client may not redeem it (the try counts).
        #expect(try server.signIn(email: "r@signet.test", code: code, client: "other").json["reason"] == .string("otp_invalid"))
        server.clock.advance(301)
        #expect(try server.signIn(email: "r@signet.test", code: code).json["reason"] == .string("otp_expired"))
        #expect(try server.startEmail("r@signet.test").status == 200)
        let fresh = try smtp.code(for: "r@signet.test", after: 1)
        for _ in 0..<5 { #expect(try server.signIn(email: "r@signet.test", code: wrong).json["reason"] == .string("otp_invalid")) }
        #expect(try server.signIn(email: "r@signet.test", code: fresh).json["reason"] == .string("otp_attempts_exceeded"))
        #expect(try server.signIn(email: "never@signet.test", code: "123456").json["reason"] == .string("otp_invalid"))
        // Malformed and unsupported requests.
        #expect(try server.post("/passwordless/start", .object(["client_id": .string("app"), "connection": .string("sms"), "email": .string("a@b.c")])).json["reason"]
            == .string("connection_disabled"))
        let link = try server.post("/passwordless/start", .object(["client_id": .string("app"), "connection": .string("email"), "email": .string("a@b.c"), "send": .string("link")]))
        // Said as what it is: links are not offered, not that email sign-in is off.
        #expect(link.json["reason"] == .string("connection_disabled") && link.json["error_description"]?.string?.contains("not links") == true)
        #expect(try server.post("/passwordless/start", .object(["client_id": .string("app"), "connection": .string("email"), "email": .string("not an address")])).json["reason"]
            == .string("malformed"))
        #expect(try server.post("/passwordless/start", .object(["client_id": .string("nope"), "connection": .string("email"), "email": .string("a@b.c")])).json["reason"]
            == .string("client_unknown"))
        #expect(try server.post("/passwordless/start", .object(["client_id": .string("refreshless"), "connection": .string("email"), "email": .string("a@b.c")])).json["reason"]
            == .string("grant_not_allowed"))
        #expect(try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.passwordlessOTP), "client_id": .string("app"), "username": .string("r@signet.test")]))
            .json["reason"] == .string("malformed"))
        #expect(try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.passwordlessOTP), "client_id": .string("app"), "username": .string("r@signet.test"),
                                                          "otp": .string("1"), "realm": .string("sms")])).json["reason"] == .string("connection_disabled"))
        // Audited, without the code.
        let events = try server.store.auditEvents(limit: 50)
        #expect(events.contains { $0.kind == "otp_sign_in" && $0.reason == "otp_attempts_exceeded" })
        #expect(!events.contains { ($0.detail ?? "").contains(code) || ($0.detail ?? "").contains(fresh) })
    }

    @Test("an address with an internationalized domain gets its code: the relay sees the A-label form, the account keeps the address as typed")
    func internationalDomain() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        #expect(try server.startEmail("Ana@Bücher.example").status == 200)
        let code = try smtp.code(for: "ana@xn--bcher-kva.example")
        let message = try #require(smtp.messages(to: "ana@xn--bcher-kva.example").last)
        #expect(message.headers["to"] == "<ana@xn--bcher-kva.example>")
        let (status, tokens) = try server.signIn(email: "ana@bücher.example", code: code, scope: "openid email")
        #expect(status == 200, "\(tokens.serialized)")
        #expect(jwtClaims(tokens["id_token"]?.string)["email"] == .string("ana@bücher.example"))
    }

    @Test("an address whose domain holds percent escapes is refused before anything is queued: no line break or second @ reaches the relay")
    func escapedDomain() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        for address in ["a@ό%0d%0abcc%3a%20x%40evil.example", "a@ό%40evil.example"] {
            let answer = try server.startEmail(address)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(address): \(answer.json.serialized)")
        }
        #expect(server.counts["outbox"] == 0)
        #expect(try server.startEmail("a@ok.example").status == 200)
        _ = try smtp.code(for: "a@ok.example")
        #expect(smtp.messages(to: "x@evil.example").isEmpty)
    }

    @Test("an address whose local part is beyond ASCII gets its code from a relay that speaks SMTPUTF8: declared in MAIL FROM, the address as typed in the envelope and To")
    func internationalLocalPart() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        #expect(try server.startEmail("José@signet.test").status == 200)
        let code = try smtp.code(for: "josé@signet.test")
        let message = try #require(smtp.messages(to: "josé@signet.test").last)
        #expect(message.headers["to"] == "<josé@signet.test>")
        #expect(message.headers["x-mail-options"]?.split(separator: " ").contains("SMTPUTF8") == true, "\(message.headers)")
        let (status, tokens) = try server.signIn(email: "josé@signet.test", code: code, scope: "openid email")
        #expect(status == 200, "\(tokens.serialized)")
        #expect(jwtClaims(tokens["id_token"]?.string)["email"] == .string("josé@signet.test"))
        // An ASCII address declares nothing it does not need.
        try server.startEmail("ascii@signet.test")
        _ = try smtp.code(for: "ascii@signet.test")
        #expect(smtp.messages(to: "ascii@signet.test").last?.headers["x-mail-options"]?.contains("SMTPUTF8") == false)
    }

    @Test("only the newest code counts")
    func newestCode() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        try server.startEmail("n@signet.test")
        let old = try smtp.code(for: "n@signet.test")
        server.clock.advance(31)
        try server.startEmail("n@signet.test")
        let new = try smtp.code(for: "n@signet.test", after: 1)
        try #require(old != new)
        #expect(try server.signIn(email: "n@signet.test", code: old).json["reason"] == .string("otp_invalid"))
        #expect(try server.signIn(email: "n@signet.test", code: new).status == 200)
    }

    @Test("16 parallel wrong guesses: exactly max_attempts are compared, the rest and then the right code find it dead")
    func parallelGuesses() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.rateLimits.enabled = false }
        try server.startEmail("p@signet.test")
        let code = try smtp.code(for: "p@signet.test")
        let wrong = code == "999999" ? "888888" : "999999"
        let reasons = simultaneously(16) { _ in
            (try? server.signIn(email: "p@signet.test", code: wrong).json["reason"]?.string) ?? "error"
        }.map { (try? $0.get()) ?? "error" }
        let counted = reasons.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        #expect(counted == ["otp_invalid": 5, "otp_attempts_exceeded": 11], "\(counted)")
        #expect(try server.signIn(email: "p@signet.test", code: code).json["reason"] == .string("otp_attempts_exceeded"))
        #expect(try server.store.emailCode(email: "p@signet.test")?.attempts == 5)
    }

    @Test("throttles: one code per 30 s and 10 an hour per address, 50 an hour per client address, with Retry-After")
    func throttles() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        // The hourly window is a fixed one: start just after an hour begins.
        let now = server.clock.now.timeIntervalSince1970
        server.clock.advance(3600 - now.truncatingRemainder(dividingBy: 3600) + 1)
        #expect(try server.startEmail("t@signet.test").status == 200)
        let again = try server.send("POST", "/passwordless/start", body: Array(#"{"client_id":"app","connection":"email","email":"t@signet.test","send":"code"}"#.utf8))
        #expect(again.status == 429 && again.text.contains("rate_limited"))
        let wait = try #require(again.headers["retry-after"].flatMap { Int($0) })
        #expect((1...30).contains(wait))
        for _ in 0..<9 {
            server.clock.advance(31)
            #expect(try server.startEmail("t@signet.test").status == 200)
        }
        server.clock.advance(31)
        #expect(try server.startEmail("t@signet.test").status == 429)
        // Per client address: the 51st start from one address in an hour.
        // In process: the test says which address each request comes from (X-Test-Remote).
        let other = try TestServer(.inProcess, smtp: smtp) { $0.rateLimits.passwordlessPerIP = RateLimit(limit: 3, window: 3600) }
        for n in 0..<3 { #expect(try other.startEmail("ip\(n)@signet.test", headers: [("x-test-remote", "203.0.113.9")]).status == 200) }
        #expect(try other.startEmail("ip9@signet.test", headers: [("x-test-remote", "203.0.113.9")]).status == 429)
        #expect(try other.startEmail("ip9@signet.test", headers: [("x-test-remote", "203.0.113.10")]).status == 200)
    }

    @Test("SMTP down while codes are asked for: each answer waits for nothing, and every message arrives once when it is back")
    func smtpOutage() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        smtp.stop()
        let addresses = (0..<5).map { "down\($0)@signet.test" }
        for address in addresses { #expect(try server.startEmail(address).status == 200) }
        // Tried and failed while the relay was down; the messages wait in the outbox.
        #expect(eventually { server.app.server.log.flush(); return (try String(contentsOf: server.logFile, encoding: .utf8)).contains("mail not delivered") })
        #expect(server.counts["outbox"] == 5)
        Thread.sleep(forTimeInterval: 1.5)
        try smtp.start()
        #expect(eventually(timeout: 20) { smtp.messages().count >= 5 })
        Thread.sleep(forTimeInterval: 2)
        let received = smtp.messages()
        #expect(received.count == 5 && Set(received.map(\.to)) == Set(addresses))
        #expect(server.counts["outbox"] == 0)
        // Codes mailed late still work.
        #expect(try server.signIn(email: addresses[0], code: try smtp.code(for: addresses[0])).status == 200)
    }

    @Test("a code's message is dropped unsent once the code has expired")
    func expiredMailDropped() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        smtp.stop()
        try server.startEmail("late@signet.test")
        server.clock.advance(301)
        try smtp.start()
        #expect(eventually { server.counts["outbox"] == 0 })
        Thread.sleep(forTimeInterval: 1)
        #expect(smtp.messages().isEmpty)
    }

    @Test("STARTTLS with AUTH, and implicit TLS, to a relay with its own CA")
    func tlsAndAuth() throws {
        let dir = Scratch.directory.appendingPathComponent("signet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path, key = dir.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                             "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        for mode in ["--starttls", "--tls"] {
            let smtp = try SMTPServer(options: [mode, cert, key, "--auth", "signet:s3cret"])
            let server = try TestServer(smtp: smtp) { c in
                c.email.username = "signet"
                c.email.password = "s3cret"
                c.email.caFile = cert
            }
            try server.startEmail("tls@signet.test")
            #expect(try smtp.code(for: "tls@signet.test").count == 6, "\(mode)")
            // A wrong password: nothing is delivered, the message waits for another try.
            let refused = try TestServer(smtp: smtp) { c in
                c.email.username = "signet"
                c.email.password = "wrong"
                c.email.caFile = cert
            }
            try refused.startEmail("nope@signet.test")
            Thread.sleep(forTimeInterval: 1.5)
            #expect(smtp.messages(to: "nope@signet.test").isEmpty && refused.counts["outbox"] == 1, "\(mode)")
        }
    }

    @Test("development's outbox folder: an .eml file per message; the log names the file, never the code")
    func emlOutbox() throws {
        let server = try TestServer { c in c.email.outboxDirectory = Scratch.directory.appendingPathComponent("signet-mail-\(UUID().uuidString)").path }
        let folder = try #require(server.app.configuration.email.outboxDirectory)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try server.startEmail("dev@signet.test", headers: [("Accept-Language", "es-ES,es;q=0.9,en;q=0.5")])
        var files: [String] = []
        #expect(eventually { files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".eml") }; return files.count == 1 })
        let message = SMTPServer.parse(try String(contentsOfFile: folder + "/" + files[0], encoding: .utf8))
        let code = try #require(message.code)
        #expect(message.headers["content-language"] == "es" && message.body.contains("Su código"))
        #expect(try server.signIn(email: "dev@signet.test", code: code, headers: [("Accept-Language", "es")]).status == 200)
        // The log is read as bytes: a line being appended meanwhile may end in half a character.
        var log = Data()
        #expect(eventually(timeout: 30) {
            server.app.server.log.flush()
            log = (try? Data(contentsOf: server.logFile)) ?? Data()
            return log.range(of: Data(files[0].utf8)) != nil
        }, "\(String(decoding: log, as: UTF8.self).suffix(2000))")
        #expect(log.range(of: Data(code.utf8)) == nil)
        #expect(try server.store.user(email: "dev@signet.test")?.locale == "es")
    }

    @Test("security notices: passkey and device key added, refresh token reused, in the account's language")
    func notices() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "notice@signet.test")
        #expect(try account.addPasskey(SoftwareAuthenticator(), name: "Laptop").status == 201)
        try account.enroll(try SoftwareDeviceKey(deviceID: "phone"))
        let tokens = try account.phone.signIn()
        let refresh = try #require(tokens["refresh_token"])
        let body = JSONValue.object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": refresh])
        #expect(try server.post("/oauth/token", body).status == 200)
        #expect(try server.post("/oauth/token", body).json["reason"] == .string("refresh_token_reused"))
        #expect(eventually { Set(smtp.messages(to: "notice@signet.test").map(\.kind)).isSuperset(of: ["passkey_added", "device_key_added", "refresh_token_reused"]) })
        #expect(smtp.messages(to: "notice@signet.test").first { $0.kind == "passkey_added" }?.body.contains("Laptop") == true)
    }

    @Test("security notices: a passkey or device key removed, by the owner or by an operator, said so; a refused removal tells nobody")
    func removalNotices() throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(smtp: smtp)
        let account = try SignedIn(server, email: "removal@signet.test")
        let laptop = SoftwareAuthenticator(), tablet = SoftwareAuthenticator()
        #expect(try account.addPasskey(laptop, name: "Laptop").status == 201)
        #expect(try account.addPasskey(tablet, name: "Tablet").status == 201)
        let deviceID = try account.enroll(try SoftwareDeviceKey(deviceID: "phone"))
        let passkeys = try account.call("GET", "/me/passkeys").json["passkeys"]?.array ?? []
        let laptopID = try #require(passkeys.first { $0["name"] == .string("Laptop") }?["id"]?.string)
        let tabletID = try #require(passkeys.first { $0["name"] == .string("Tablet") }?["id"]?.string)
        // The owner removes one passkey and the device key.
        #expect(try account.call("DELETE", "/me/passkeys/\(laptopID)").status == 204)
        #expect(try account.call("DELETE", "/me/device-keys/\(deviceID)").status == 204)
        // An operator removes another.
        let token = try server.managementToken()
        let user = try #require(try server.store.user(email: "removal@signet.test"))
        #expect(try server.api("DELETE", "/api/v2/users/\(user.id)/authentication-methods/passkey%7C\(tabletID)", token: token).status == 204)
        #expect(eventually { smtp.messages(to: "removal@signet.test").filter { $0.kind == "passkey_removed" }.count == 2 })
        #expect(eventually { smtp.messages(to: "removal@signet.test").contains { $0.kind == "device_key_removed" } })
        let removed = smtp.messages(to: "removal@signet.test").filter { $0.kind == "passkey_removed" }
        #expect(removed.contains { $0.body.contains("Laptop") && !$0.body.contains("administrator") })
        #expect(removed.contains { $0.body.contains("Tablet") && $0.body.contains("by an administrator") })
        // The last passkey is refused: no notice; one already gone: none either.
        #expect(eventually { smtp.messages(to: "removal@signet.test").filter { $0.kind == "passkey_added" || $0.kind == "device_key_added" }.count == 3 })
        let before = smtp.messages(to: "removal@signet.test").count
        let last = try #require(try account.call("GET", "/me/passkeys").json["passkeys"]?.array?.first?["id"]?.string)
        #expect(try account.call("DELETE", "/me/passkeys/\(last)").json["reason"] == .string("last_credential"))
        #expect(try account.call("DELETE", "/me/passkeys/\(laptopID)").status == 404)
        _ = server.app.sendMailNow()
        #expect(smtp.messages(to: "removal@signet.test").count == before)
    }
}
