import Foundation
import SignetAPI
import SignetAuth
import SignetSoftware
import SignetWebAuthn
import Testing

/// A passkey made without a name, of a model the server cannot name, is named after where it was
/// made, so that an account's passkeys can be told apart on the account page: the browser on the
/// hosted pages, the app and its system through the API; a tool's, or a model the server can
/// name, is left unnamed.
@Suite struct PasskeyNameTests {
    static let safari = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
    static let firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
    static let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

    static func names(_ server: TestServer, _ email: String) throws -> Set<String?> {
        let user = try #require(try server.store.user(email: email))
        return Set(try server.store.credentials(userID: user.id).map(\.name))
    }

    /// `/account/passkeys/options` and `/account/passkeys` with a new authenticator, as the page script does.
    static func addOnPage(_ browser: WebBrowser, email: String, authenticator: SoftwareAuthenticator = SoftwareAuthenticator()) throws {
        try browser.page("/account")
        let start = try browser.json("/account/passkeys/options")
        try #require(start.status == 200, "\(start.json.serialized)")
        let options = try #require(start.json["authn_params_public_key"])
        let registration = try authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: email)
        let done = try browser.json("/account/passkeys", .object(["auth_session": start.json["auth_session"]!, "authn_response": registration.json]))
        try #require(done.status == 201, "\(done.json.serialized)")
    }

    @Test("sign-up and the account page name a passkey after the browser that made it; the page shows the name, ready to change")
    func pages() throws {
        let server = try WebPageTests.server()
        let browser = WebBrowser(server)
        browser.userAgent = Self.safari
        try browser.signUp(email: "named@signet.test")
        #expect(try Self.names(server, "named@signet.test") == ["Safari · macOS"])
        // The same account, its next passkey made from another browser.
        browser.userAgent = Self.firefox
        try Self.addOnPage(browser, email: "named@signet.test")
        #expect(try Self.names(server, "named@signet.test") == ["Safari · macOS", "Firefox · Windows"])
        let page = try browser.page("/account").html
        for name in ["Safari · macOS", "Firefox · Windows"] {
            #expect(page.contains("data-testid=\"passkey-name\">\(name)</strong>") && page.contains("value=\"\(name)\""), "\(name)")
        }
        // A name the owner gives is kept as given.
        let user = try #require(try server.store.user(email: "named@signet.test"))
        let first = try #require(try server.store.credentials(userID: user.id).first { $0.name == "Safari · macOS" })
        #expect(try browser.form("/account/passkeys/\(Base64URL.encode(first.id))/rename", [("name", "Work Mac")]).status == 303)
        #expect(try Self.names(server, "named@signet.test") == ["Work Mac", "Firefox · Windows"])
        // The history names the passkey each event was about, as it is called now, a removed one too.
        let second = try #require(try server.store.credentials(userID: user.id).first { $0.name == "Firefox · Windows" })
        #expect(try browser.form("/account/passkeys/\(Base64URL.encode(second.id))/revoke", []).status == 303)
        let events = Self.events(try browser.page("/account").html)
        #expect(events.contains { $0.kind == "Account created" && $0.what == "Work Mac" }, "\(events)")
        #expect(events.contains { $0.kind == "Passkey added" && $0.what == "Firefox · Windows" }, "\(events)")
        #expect(events.contains { $0.kind == "Passkey removed" && $0.what == "Firefox · Windows" }, "\(events)")
    }

    /// The history's rows on an account page: each event's words and, when it names one, the key.
    @Test("a second passkey made where the first was is numbered, so the page tells them apart; a freed name is used again, and a name the owner gives is kept as given")
    func numbered() throws {
        let server = try WebPageTests.server()
        let browser = WebBrowser(server)
        browser.userAgent = Self.chrome
        let email = "twice@signet.test"
        try browser.signUp(email: email)
        try Self.addOnPage(browser, email: email)
        try Self.addOnPage(browser, email: email)
        #expect(try Self.names(server, email) == ["Chrome · Linux", "Chrome · Linux 2", "Chrome · Linux 3"])
        let page = try browser.page("/account").html
        for name in ["Chrome · Linux", "Chrome · Linux 2", "Chrome · Linux 3"] {
            #expect(page.contains("data-testid=\"passkey-name\">\(name)</strong>"), "\(name)")
        }
        // The second removed: the next one takes its number; the third renamed to the plain name:
        // the first, called that too, is the owner's to tell apart.
        let user = try #require(try server.store.user(email: email))
        let rows = try server.store.credentials(userID: user.id)
        let second = try #require(rows.first { $0.name == "Chrome · Linux 2" }), third = try #require(rows.first { $0.name == "Chrome · Linux 3" })
        #expect(try browser.form("/account/passkeys/\(Base64URL.encode(second.id))/revoke", []).status == 303)
        try Self.addOnPage(browser, email: email)
        #expect(try browser.form("/account/passkeys/\(Base64URL.encode(third.id))/rename", [("name", "Chrome · Linux")]).status == 303)
        let live = try server.store.credentials(userID: user.id).filter { $0.revokedAt == nil }.compactMap(\.name).sorted()
        #expect(live == ["Chrome · Linux", "Chrome · Linux", "Chrome · Linux 2"], "\(live)")
        // Numbers are for the names Signet gives: another browser's first passkey is plain.
        browser.userAgent = Self.firefox
        try Self.addOnPage(browser, email: email)
        #expect(try Self.names(server, email).contains("Firefox · Windows"))
    }

    static func events(_ html: String) -> [(kind: String, what: String?)] {
        html.components(separatedBy: "<li data-testid=\"event-row\">").dropFirst().map { row in
            func between(_ start: String, _ end: String) -> String? {
                guard let from = row.range(of: start), let to = row[from.upperBound...].range(of: end) else { return nil }
                return String(row[from.upperBound..<to.lowerBound])
            }
            return (between("<span class=\"event-kind\">", "</span>") ?? "", between("data-testid=\"event-what\">", "</q>"))
        }
    }

    @Test("the history names a device key by its name, and leaves unnamed a passkey nothing names")
    func deviceKeyEvents() throws {
        let server = try WebPageTests.server()
        // An app's account: its passkey of no known model, unnamed; a device key named by the app.
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "keys@signet.test")
        let account = SignedIn(server, phone: phone, access: try #require(tokens["access_token"]?.string))
        try account.enroll(SoftwareDeviceKey(deviceID: "phone-1"))
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        let signIn = try browser.signIn()
        #expect(signIn.status == 200, "\(signIn.json.serialized)")
        let events = Self.events(try browser.page("/account").html)
        #expect(events.contains { $0.kind == "Device key added" && $0.what == "Test phone" }, "\(events)")
        #expect(events.contains { $0.kind == "Signed in with a passkey" && $0.what == nil }, "\(events)")
        #expect(events.contains { $0.kind == "Account created" && $0.what == nil }, "\(events)")
    }

    @Test("a tool's User-Agent, a model the server can name, and an app that names nothing leave the name unset")
    func unnamed() throws {
        let server = try WebPageTests.server()
        // Neither a browser nor a system the pages can tell: the placeholder says what it is.
        let tool = WebBrowser(server)
        tool.userAgent = "curl/8.5.0"
        try tool.signUp(email: "tool@signet.test")
        #expect(try Self.names(server, "tool@signet.test") == [nil])
        let page = try tool.page("/account").html
        #expect(page.contains("data-testid=\"passkey-name\">Passkey</strong>") && page.contains("value=\"\" placeholder=\"Passkey\""))
        // A model the server knows by its AAGUID is shown by that name, not the browser's.
        var settings = SoftwareAuthenticator.Settings()
        settings.aaguid = withUnsafeBytes(of: UUID(uuidString: "adce0002-35bc-c60a-648b-0b25f1f05503")!.uuid) { Array($0) }
        let known = WebBrowser(server, authenticator: SoftwareAuthenticator(settings: settings))
        known.userAgent = Self.chrome
        try known.signUp(email: "known@signet.test")
        #expect(try Self.names(server, "known@signet.test") == [nil])
        #expect(try known.page("/account").html.contains("data-testid=\"passkey-name\">Chrome on Mac</strong>"))
        // An app without a name whose User-Agent names no system: URLSession's own on Apple's
        // systems (Darwin is both iOS and macOS), OkHttp's, none at all.
        for (index, agent) in ["Acme/3 CFNetwork/1494.0.7 Darwin/23.4.0", "okhttp/4.12.0", nil].enumerated() {
            var phone = Phone(server)
            phone.userAgent = agent
            _ = try phone.signUp(email: "app\(index)@signet.test")
            #expect(try Self.names(server, "app\(index)@signet.test") == [nil], "\(agent ?? "none")")
        }
    }

    static let sdk = "SignetClient (iOS 18.1)"
    static let dalvik = "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)"

    @Test("an app's passkey is named after the app and the system its User-Agent names: at sign-up, through an enrollment link and through the API; a browser's User-Agent names the browser")
    func apps() throws {
        let (server, ops) = try EnrollmentLinkTests.server(signUp: true)
        // The app's client without a name, then with one: "App", then its name.
        var phone = Phone(server)
        phone.userAgent = Self.sdk
        _ = try phone.signUp(email: "nameless@signet.test")
        #expect(try Self.names(server, "nameless@signet.test") == ["App · iOS"])
        let named = try TestServer.withOperators(.socket) { c in
            if let app = c.clients.firstIndex(where: { $0.id == "app" }) { c.clients[app].name = "Acme" }
        }
        for (agent, name) in [(Self.sdk, "Acme · iOS"), (Self.dalvik, "Acme · Android"), ("Acme/3 CFNetwork/1494.0.7 Darwin/23.4.0", "Acme"),
                              (Self.chrome, "Chrome · Linux"), ("SignetClient (Plan9 4)", "Acme")] {
            var phone = Phone(named)
            phone.userAgent = agent
            let email = "\(name.prefix(while: { $0.isLetter }))-\(UUID().uuidString.prefix(6))@signet.test".lowercased()
            _ = try phone.signUp(email: email)
            #expect(try Self.names(named, email) == [name], "\(agent)")
        }
        // Through an operator's enrollment link, in the app.
        let id = try EnrollmentLinkTests.account(server, ops, "linked@signet.test")
        var linked = Phone(server)
        linked.userAgent = Self.dalvik
        let enrolled = try EnrollmentLinkTests.appEnroll(linked, ticket: try EnrollmentLinkTests.link(server, ops, id))
        #expect(enrolled.done?.status == 200, "\(enrolled.done?.json.serialized ?? "")")
        #expect(try Self.names(server, "linked@signet.test") == ["App · Android"])
        // Added through the API: named the same way; a name given is kept as given.
        var account = try SignedIn(server, email: "added@signet.test")
        account.userAgent = "SignetClient (macOS 15.2)"
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        #expect(try account.addPasskey(SoftwareAuthenticator(), name: "Office key").status == 201)
        #expect(try Self.names(server, "added@signet.test") == [nil, "App · macOS", "Office key"])
        #expect(try account.passkeys().compactMap { $0["name"]?.string }.sorted() == ["App · macOS", "Office key"])
    }
}
