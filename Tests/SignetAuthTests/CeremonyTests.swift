import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing
import SignetTestSupport

/// The ceremonies driven directly: typed values in and out, no HTTP type anywhere, with the
/// clock and the random source injected.
@Suite struct CeremonyTests {
    final class Clock: @unchecked Sendable {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
    }

    static func ceremonies(clock: Clock, random: @escaping RandomBytes = { SecureRandom.bytes($0) }) throws -> Ceremonies {
        let path = Scratch.directory.appendingPathComponent("signet-auth-\(UUID().uuidString).db").path
        let store = try SQLStore(path: path)
        var configuration = ServerConfiguration(issuer: "https://signet.test")
        configuration.rpID = "signet.test"
        configuration.webOrigins = ["https://signet.test"]
        configuration.audiences = ["https://api.signet.test"]
        configuration.clients = [ClientConfiguration(id: "app", grants: GrantNames.all)]
        let kek = Array(repeating: UInt8(7), count: 32)
        let keys = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now }, random: random)
        return Ceremonies(configuration: configuration, store: store, keys: keys, kek: kek, clock: { clock.now }, random: random)
    }

    static let context = RequestContext(remoteAddress: "192.0.2.1", requestID: "test")

    @Test("sign-up and sign-in as typed values; the tokens carry the injected clock's time")
    func signUpAndIn() throws {
        let clock = Clock()
        let ceremonies = try Self.ceremonies(clock: clock)
        let authenticator = SoftwareAuthenticator()
        let start = try ceremonies.beginSignUp(PasskeyRegisterRequest(client_id: "app", user_profile: UserProfile(email: "ada@signet.test")), context: Self.context)
        let made = try authenticator.register(
            rpID: "signet.test", origin: "https://signet.test", challenge: try #require(start.options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(start.options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: "ada")
        let credential = try JSONDecoder().decode(CredentialJSON.self, from: Data(made.json.serialized.utf8))
        let tokens = try ceremonies.passkeyGrant(
            TokenRequest(grant_type: GrantType.webauthn, client_id: "app", auth_session: start.authSession, authn_response: credential), context: Self.context)
        let principal = try ceremonies.authenticate(accessToken: tokens.access_token)
        #expect(principal.user.email == "ada@signet.test")
        #expect(principal.claims["iat"]?.int64 == 1_800_000_000)
        // The same session again: a typed refusal with its reason.
        #expect {
            _ = try ceremonies.passkeyGrant(
                TokenRequest(grant_type: GrantType.webauthn, client_id: "app", auth_session: start.authSession, authn_response: credential), context: Self.context)
        } throws: { ($0 as? AuthError)?.reason == .authSessionUnknown }
    }

    @Test("an auth session expires by the injected clock")
    func expiry() throws {
        let clock = Clock()
        let ceremonies = try Self.ceremonies(clock: clock)
        let start = try ceremonies.beginSignIn(PasskeyChallengeRequest(client_id: "app"), context: Self.context)
        clock.now += 301
        let made = try SoftwareAuthenticator().register(rpID: "signet.test", origin: "https://signet.test", challenge: [1], userHandle: [1], userName: "x")
        let credential = try JSONDecoder().decode(CredentialJSON.self, from: Data(made.json.serialized.utf8))
        #expect {
            _ = try ceremonies.passkeyGrant(
                TokenRequest(grant_type: GrantType.webauthn, client_id: "app", auth_session: start.authSession, authn_response: credential), context: Self.context)
        } throws: { ($0 as? AuthError)?.reason == .authSessionExpired }
    }

    @Test("challenges come from the injected random source")
    func random() throws {
        let ceremonies = try Self.ceremonies(clock: Clock(), random: { Array(repeating: 0xAB, count: $0) })
        let start = try ceremonies.beginSignIn(PasskeyChallengeRequest(client_id: "app"), context: Self.context)
        #expect(start.options["challenge"]?.string == Base64URL.encode(Array(repeating: 0xAB, count: 32)))
    }

    @Test("SignetAuth imports no HTTP, database or C module")
    func layering() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Sources/SignetAuth")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 5)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for module in ["SignetHTTP", "SignetStore", "SignetServer", "COpenSSL", "CSQLite", "CPostgres", "CMicroHTTPD"] {
                #expect(!text.contains("import \(module)\n"), "\(file) imports \(module)")
            }
        }
    }
}
