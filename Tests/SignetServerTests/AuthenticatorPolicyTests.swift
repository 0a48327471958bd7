import Foundation
import SignetAuth
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing

/// `allowed_aaguids` and `denied_aaguids`: which authenticator models may register and sign in.
@Suite struct AuthenticatorPolicyTests {
    static let zero = "00000000-0000-0000-0000-000000000000"
    static let yubiKey = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
    static let iCloud = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"

    /// An authenticator that reports `aaguid`.
    static func model(_ aaguid: String) -> SoftwareAuthenticator.Settings {
        var settings = SoftwareAuthenticator.Settings()
        settings.aaguid = withUnsafeBytes(of: UUID(uuidString: aaguid)!.uuid) { Array($0) }
        return settings
    }

    static func isRefusal(_ answer: (status: Int, json: JSONValue)) -> Bool {
        answer.status == 403 && answer.json["reason"] == .string("authenticator_not_allowed") && answer.json["error"] == .string("access_denied")
    }

    @Test("denied_aaguids: a sign-up or an added passkey of a denied model is refused and nothing is stored; other models pass")
    func denied() throws {
        let server = try TestServer { $0.deniedAAGUIDs = [Self.iCloud] }
        let phone = Phone(server, settings: Self.model(Self.iCloud))
        let (session, credential) = try phone.startSignUp(email: "denied@signet.test")
        let refused = try phone.exchange(session: session, credential: credential)
        #expect(Self.isRefusal(refused), "\(refused.json.serialized)")
        #expect(server.counts["users"] == 0 && server.counts["credentials"] == 0)
        #expect(try server.store.auditEvents(limit: 20).contains { $0.kind == "sign_up" && $0.reason == "authenticator_not_allowed" && $0.detail?.contains("iCloud Keychain") == true })
        // A model not on the list signs up; then adding a denied one to the account is refused.
        let account = try SignedIn(server, email: "key@signet.test", settings: Self.model(Self.yubiKey))
        #expect(Self.isRefusal(try account.addPasskey(SoftwareAuthenticator(settings: Self.model(Self.iCloud)))))
        #expect(try account.passkeys().count == 1)
        #expect(try account.addPasskey(SoftwareAuthenticator(settings: Self.model(Self.zero))).status == 201)
    }

    @Test("allowed_aaguids: only the listed models register; an authenticator that does not tell its model (the all-zero AAGUID) only when it is listed")
    func allowed() throws {
        let server = try TestServer { $0.allowedAAGUIDs = [Self.yubiKey] }
        for aaguid in [Self.zero, Self.iCloud] {
            let phone = Phone(server, settings: Self.model(aaguid))
            let (session, credential) = try phone.startSignUp(email: "\(aaguid.prefix(4))@signet.test")
            #expect(Self.isRefusal(try phone.exchange(session: session, credential: credential)), "\(aaguid)")
        }
        let key = Phone(server, settings: Self.model(Self.yubiKey))
        _ = try key.signUp(email: "yubi@signet.test")
        #expect(try key.signIn()["access_token"] != nil)
        let listed = try TestServer { $0.allowedAAGUIDs = [Self.yubiKey, Self.zero] }
        _ = try Phone(listed, settings: Self.model(Self.zero)).signUp(email: "untold@signet.test")
    }

    @Test("a passkey whose model is denied after it registered no longer signs in, once its signature checks; the account's other passkey does")
    func deniedLater() throws {
        let before = try TestServer()
        let account = try SignedIn(before, email: "later@signet.test", settings: Self.model(Self.iCloud))
        let key = SoftwareAuthenticator(settings: Self.model(Self.yubiKey))
        let added = try account.addPasskey(key)
        #expect(added.status == 201, "\(added.json.serialized)")
        // The same database under a policy that now denies the first model.
        let after = try TestServer.withOperators(sharing: before.directory) { $0.deniedAAGUIDs = [Self.iCloud] }
        let phone = Phone(after, authenticator: account.phone.authenticator)
        let (session, credential, _) = try phone.startSignIn(username: "later@signet.test")
        #expect(Self.isRefusal(try phone.exchange(session: session, credential: credential)))
        // A forged signature is refused as such: the policy answers only the key's holder.
        var forge = Tamper()
        forge.signature = { $0[$0.count - 1] ^= 1 }
        let (forgedSession, forged, _) = try phone.startSignIn(username: "later@signet.test", tamper: forge)
        #expect(try phone.exchange(session: forgedSession, credential: forged).json["reason"] == .string("signature_invalid"))
        #expect(try after.store.auditEvents(limit: 50).contains { $0.kind == "sign_in" && $0.reason == "authenticator_not_allowed" })
        #expect(try Phone(after, authenticator: key).signIn(username: "later@signet.test")["access_token"] != nil)
        // The account's list says which of its passkeys the policy refuses.
        let listed = try StrictJSON().parse(after.send("GET", "/me/passkeys", headers: account.bearer).body)["passkeys"]?.array ?? []
        #expect(listed.map { $0["allowed"] } == [JSONValue.bool(false), JSONValue.bool(true)], "\(listed)")
        // So does the Management API's, for the operator looking for accounts the policy stranded.
        let id = try #require(jwtClaims(account.access)["sub"]?.string)
        let methods = try after.api("GET", "/api/v2/users/\(id)/authentication-methods", token: after.managementToken()).json.array ?? []
        #expect(methods.filter { $0["type"] == .string("passkey") }.map { $0["allowed"] } == [JSONValue.bool(false), JSONValue.bool(true)], "\(methods)")
        #expect(methods.filter { $0["type"] != .string("passkey") }.allSatisfy { $0["allowed"] == nil }, "\(methods)")
    }

    @Test("the account page marks a passkey whose model the policy no longer allows, in the page's language")
    func accountPage() throws {
        let before = try TestServer()
        let browser = WebBrowser(before, authenticator: SoftwareAuthenticator(settings: Self.model(Self.iCloud)))
        _ = try browser.signUp(email: "page@signet.test")
        #expect(try !browser.page("/account").html.contains("passkey-not-allowed"))
        let after = try TestServer(sharing: before.directory) { $0.deniedAAGUIDs = [Self.iCloud] }
        let later = WebBrowser(after)
        later.cookies = browser.cookies
        let page = try later.page("/account").html
        #expect(page.contains(#"data-testid="passkey-not-allowed""#) && page.contains("no longer allowed here"), "\(page)")
        #expect(try later.page("/account?ui_locales=es").html.contains("ya no está permitido"))
    }
}
