import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `signup_domains`: accounts made by their owners only for addresses at the organization's
/// domains, each starting with an email code that proves the mailbox, its passkey added after;
/// over a real socket with a real SMTP server.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct SignUpDomainTests {
    static func server(_ smtp: SMTPServer, domains: [String] = ["acme.test", "lab.acme.test"]) throws -> TestServer {
        try TestServer.withOperators(.socket, smtp: smtp) { c in
            c.signUpDomains = domains
            TestServer.webClients(&c)
        }
    }

    @Test("the setting: lower-cased, checked as a mail domain, from the file or the environment")
    func configuration() throws {
        let loaded = try ConfigurationLoader.load(file: nil, environment: ["SIGNET_SIGNUP_DOMAINS": "Acme.TEST, lab.acme.test"])
        #expect(loaded.signUpDomains == ["acme.test", "lab.acme.test"])
        #expect(loaded.signUpDomainAllows("ada@acme.test") && loaded.signUpDomainAllows("bo@lab.acme.test"))
        // Whole domains: neither a subdomain nor a look-alike ending.
        #expect(!loaded.signUpDomainAllows("ada@mail.acme.test") && !loaded.signUpDomainAllows("ada@notacme.test") && !loaded.signUpDomainAllows("acme.test@evil.test"))
        #expect(try ConfigurationLoader.load(file: nil, environment: [:]).signUpDomainAllows("any@where.test"))
        for bad in ["acme..test", "@acme.test", "acme.test/x", "", ".acme.test", "a b.test"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ConfigurationLoader.load(file: nil, environment: ["SIGNET_SIGNUP_DOMAINS": JSONValue.array([.string(bad)]).serialized])
            }
        }
    }

    @Test("a passkey sign-up is refused, with why: another domain, or a code first; nothing is made, and a sign-up begun before is not finished")
    func passkeyFirstRefused() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        for (email, reason) in [("eve@elsewhere.test", "signup_domain_not_allowed"), ("ada@acme.test", "signup_code_required"), ("ADA@Lab.Acme.Test", "signup_code_required")] {
            let answer = try server.post("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string(email)])]))
            #expect(answer.status == 403 && answer.json["reason"] == .string(reason), "\(email): \(answer.json.serialized)")
        }
        #expect(try server.store.auditEvents(limit: 20).filter { $0.kind == AuditKind.signUpChallenge.rawValue }.compactMap(\.reason).sorted()
                == ["signup_code_required", "signup_code_required", "signup_domain_not_allowed"])
        // A sign-up begun where any address could, finished here: refused at the proof.
        let open = try TestServer.withOperators(.socket, smtp: smtp, sharing: server.directory) { TestServer.webClients(&$0) }
        var phone = Phone(open)
        let begun = try phone.startSignUp(email: "late@acme.test")
        phone.server = server
        let finished = try phone.exchange(session: begun.session, credential: begun.credential)
        #expect(finished.status == 403 && finished.json["reason"] == .string("signup_code_required"))
        #expect(try server.store.users(UserQuery()).total == 0)
    }

    @Test("an address at a domain signs up with a code (verified), then adds a passkey and signs in with it; one elsewhere gets no code, and a guess makes nothing")
    func codeFirst() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let inside = try server.startEmail("Ada@Acme.test"), outside = try server.startEmail("eve@elsewhere.test")
        // The same answer either way; only the audit row says why nothing went.
        #expect(inside.status == 200 && outside.status == 200 && Set(inside.json.object.map { Array($0.keys) } ?? []) == Set(outside.json.object.map { Array($0.keys) } ?? []))
        let code = try smtp.code(for: "ada@acme.test")
        let signedUp = try server.signIn(email: "ada@acme.test", code: code)
        #expect(signedUp.status == 200, "\(signedUp.json.serialized)")
        let user = try #require(try server.store.user(email: "ada@acme.test"))
        #expect(user.emailVerified)
        #expect(smtp.messages(to: "eve@elsewhere.test").isEmpty)
        let why = try server.store.auditEvents(limit: 20).first { $0.kind == AuditKind.otpSent.rawValue && $0.userID == nil }?.detail
        #expect(why == "no account, and sign-up is for signup_domains only: nothing sent")
        let guess = try server.signIn(email: "eve@elsewhere.test", code: "123456")
        #expect(guess.status == 403 && guess.json["reason"] == .string("otp_invalid"))
        #expect(try server.store.user(email: "eve@elsewhere.test") == nil)

        // Then a passkey, which signs in.
        let access = try #require(signedUp.json["access_token"]?.string)
        let phone = Phone(server)
        let added = try SignedIn(server, phone: phone, access: access).addPasskey(phone.authenticator)
        #expect(added.status == 200 || added.status == 201, "adding a passkey after the code sign-up: \(added.json.serialized)")
        let signIn = try phone.signIn(username: "ada@acme.test")
        #expect(signIn["access_token"] != nil)
        // An account at another domain that an operator made still signs in by code.
        let token = try server.managementToken()
        #expect(try server.api("POST", "/api/v2/users", token: token, .object(["email": .string("contractor@elsewhere.test")])).status == 201)
        _ = try server.startEmail("contractor@elsewhere.test")
        #expect(try server.signIn(email: "contractor@elsewhere.test", code: try smtp.code(for: "contractor@elsewhere.test")).status == 200)
    }

    @Test("the sign-up page asks for the code at once and says why; an address elsewhere is shown the page again with the reason, in Spanish too")
    func page() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let browser = WebBrowser(server)
        let signup = try browser.page("/signup")
        #expect(signup.status == 200 && signup.html.contains("data-testid=\"code-first\"") && signup.html.contains("data-fallback=\"1\""))
        #expect(signup.html.contains("Create account with an email code"))
        let refused = try browser.form("/signup", [("email", "eve@elsewhere.test"), ("name", "Eve")])
        #expect(refused.status == 403 && refused.html.contains("data-reason=\"signup_domain_not_allowed\"") && refused.html.contains("value=\"Eve\""))
        #expect(smtp.messages(to: "eve@elsewhere.test").isEmpty)
        let spanish = try browser.form("/signup?ui_locales=es", [("email", "eve@elsewhere.test")])
        #expect(spanish.html.contains("usa la tuya") || spanish.html.contains("data-reason=\"signup_domain_not_allowed\""))
        let sent = try browser.form("/signup", [("email", "ada@acme.test"), ("name", "Ada")])
        #expect(sent.status == 200 && sent.html.contains("data-page=\"code\""))
        #expect(try !smtp.code(for: "ada@acme.test").isEmpty)
        // The script's passkey start: refused with the reason it falls back to the form on.
        let script = try browser.json("/signup/options", .object(["email": .string("bo@acme.test")]))
        #expect(script.status == 403 && script.json["reason"] == .string("signup_code_required"))
        // Without the setting, the page is as before.
        let plain = try WebBrowser(TestServer(.socket) { TestServer.webClients(&$0) }).page("/signup")
        #expect(plain.status == 200 && !plain.html.contains("code-first") && plain.html.contains("Create account with a passkey"))
    }
}
