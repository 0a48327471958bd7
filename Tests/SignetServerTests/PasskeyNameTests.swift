import Foundation
import SignetAPI
import SignetAuth
import SignetSoftware
import SignetWebAuthn
import Testing

/// A passkey made on the hosted pages without a name, of a model the server cannot name, is
/// named after the browser that made it, so that an account's passkeys can be told apart on the
/// account page; an app's passkey, a tool's, or a model the server can name is left unnamed.
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

    @Test("a tool's User-Agent, a model the server can name, and an app's sign-up through the API leave the name unset")
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
        // An app's sign-up: its User-Agent on the token call names nothing (an app names its
        // passkeys itself, through the API's name).
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "app@signet.test")
        let (status, json) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string(phone.clientID), "auth_session": .string(session), "authn_response": credential,
        ]), headers: [("User-Agent", Self.chrome)])
        #expect(status == 200, "\(json.serialized)")
        #expect(try Self.names(server, "app@signet.test") == [nil])
    }
}
