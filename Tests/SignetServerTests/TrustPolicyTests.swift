import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing
import SignetTestSupport

/// A throw-away attestation root and the packed attestation (WebAuthn L3 §8.2) of a leaf it signs.
struct TestAttestationRoot {
    let key: PrivateKey
    let certificate: Certificate

    init(name: String) throws {
        key = try PrivateKey.generate(.ec(.p256))
        var builder = CertificateBuilder(subject: [("2.5.4.3", name)], notBefore: Date().addingTimeInterval(-86400), notAfter: Date().addingTimeInterval(86400 * 365))
        builder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
        certificate = try builder.sign(publicKey: key.publicKey, issuer: nil, issuerKey: key)
    }

    /// The root as a PEM file, as `trust_anchors` names it.
    func pemFile(in directory: URL) throws -> String {
        let base64 = Data(certificate.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let path = directory.appendingPathComponent("anchor-\(UUID().uuidString).pem").path
        try "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A packed attestation whose x5c is one leaf issued by this root, with the subject and
    /// extensions §8.2.1 asks for.
    var packed: Tamper {
        var tamper = Tamper()
        tamper.attestation = { [key, certificate] input in
            let leafKey = try PrivateKey.generate(.ec(.p256))
            var builder = CertificateBuilder(
                subject: [("2.5.4.6", "SE"), ("2.5.4.10", "Signet Test"), ("2.5.4.11", "Authenticator Attestation"), ("2.5.4.3", "Signet Test Key")],
                serial: Int.random(in: 2...1_000_000), notBefore: Date().addingTimeInterval(-3600), notAfter: Date().addingTimeInterval(86400 * 30))
            builder.extensions = [
                ("2.5.29.19", true, DER.sequence([])),
                ("1.3.6.1.4.1.45724.1.1.4", false, DER.octetString(Array(input.authenticatorData[37..<53]))),
            ]
            let leaf = try builder.sign(publicKey: leafKey.publicKey, issuer: certificate, issuerKey: key)
            let sig = try leafKey.sign(input.authenticatorData + input.clientDataHash, scheme: .ecdsa(.sha256))
            return ("packed", CBORMap([(.text("alg"), .int(input.algorithm.rawValue)), (.text("sig"), .bytes(sig)), (.text("x5c"), .array([.bytes(leaf.der)]))]))
        }
        return tamper
    }
}

/// DESIGN.md, "Security rules": with trust anchors configured, a registration is accepted only
/// when its attestation chains to one, on every registration path.
@Suite struct TrustPolicyTests {
    let anchor: TestAttestationRoot
    let stranger: TestAttestationRoot
    let server: TestServer

    init() throws {
        anchor = try TestAttestationRoot(name: "Signet Test Trusted Root")
        stranger = try TestAttestationRoot(name: "Some Other Root")
        let directory = Scratch.directory
        let file = try anchor.pemFile(in: directory)
        server = try TestServer { $0.trustAnchorFiles = [file] }
    }

    /// The attestations that must be refused: `none`, packed self, and a packed chain to another root.
    var refused: [(name: String, settings: SoftwareAuthenticator.Settings, tamper: Tamper)] {
        var packedSelf = SoftwareAuthenticator.Settings()
        packedSelf.attestation = "packed"
        return [("none", SoftwareAuthenticator.Settings(), .none), ("packed self", packedSelf, .none),
                ("packed chain to another root", SoftwareAuthenticator.Settings(), stranger.packed)]
    }

    @Test("sign-up refuses none, packed self and a chain to another root with attestation_untrusted, creating nothing; a chain to the anchor signs up")
    func signUp() throws {
        for (index, attempt) in refused.enumerated() {
            let phone = Phone(server, settings: attempt.settings)
            let before = server.counts
            let (session, credential) = try phone.startSignUp(email: "refused\(index)@signet.test", tamper: attempt.tamper)
            let (status, json) = try phone.exchange(session: session, credential: credential)
            #expect(status == 400 && json["reason"] == .string("attestation_untrusted"), "\(attempt.name): \(json.serialized)")
            #expect(server.counts["users"] == before["users"] && server.counts["credentials"] == before["credentials"], "\(attempt.name) created something")
        }
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "trusted@signet.test", tamper: anchor.packed)
        let (status, json) = try phone.exchange(session: session, credential: credential)
        #expect(status == 200, "\(json.serialized)")
        #expect(server.counts["users"] == 1 && server.counts["credentials"] == 1)
    }

    @Test("add-passkey applies the same policy: the three are refused with attestation_untrusted and add nothing; a chain to the anchor is added")
    func addPasskey() throws {
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "owner@signet.test", tamper: anchor.packed)
        let tokens = try phone.exchange(session: session, credential: credential).json
        let bearer = [("Authorization", "Bearer \(try #require(tokens["access_token"]?.string))")]
        func add(_ authenticator: SoftwareAuthenticator, _ tamper: Tamper) throws -> (status: Int, json: JSONValue) {
            let (status, options) = try server.post("/me/passkeys/options", .object([:]), headers: bearer)
            try #require(status == 200)
            let publicKey = try #require(options["authn_params_public_key"])
            let made = try authenticator.register(
                rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(publicKey["challenge"]?.string.flatMap { Base64URL.decode($0) }),
                userHandle: try #require(publicKey["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: "owner", tamper: tamper)
            return try server.post("/me/passkeys", .object(["auth_session": options["auth_session"]!, "authn_response": made.json]), headers: bearer)
        }
        for attempt in refused {
            let (status, json) = try add(SoftwareAuthenticator(settings: attempt.settings), attempt.tamper)
            #expect(status == 400 && json["reason"] == .string("attestation_untrusted"), "\(attempt.name): \(json.serialized)")
            #expect(server.counts["credentials"] == 1, "\(attempt.name) added a passkey")
        }
        let (status, json) = try add(SoftwareAuthenticator(), anchor.packed)
        #expect(status == 201, "\(json.serialized)")
        #expect(server.counts["credentials"] == 2)
    }

    @Test("without trust anchors every verified attestation is accepted, as before")
    func noAnchors() throws {
        let open = try TestServer()
        var packedSelf = SoftwareAuthenticator.Settings()
        packedSelf.attestation = "packed"
        for (index, (settings, tamper)) in [(SoftwareAuthenticator.Settings(), Tamper.none), (packedSelf, .none), (SoftwareAuthenticator.Settings(), stranger.packed)].enumerated() {
            let phone = Phone(open, settings: settings)
            let (session, credential) = try phone.startSignUp(email: "open\(index)@signet.test", tamper: tamper)
            #expect(try phone.exchange(session: session, credential: credential).status == 200)
        }
    }
}

/// WebAuthn L3 §5.1: `type` is `public-key` and `id` is base64url(`rawId`), on sign-in as on sign-up.
@Suite struct CredentialIdentityTests {
    static func edited(_ credential: JSONValue, _ member: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var object) = credential else { return credential }
        object[member] = value
        return .object(object)
    }

    static let cases: [(member: String, value: JSONValue, reason: String)] = [
        ("type", .string("password"), "malformed"),
        ("id", .string(Base64URL.encode(Array(repeating: 7, count: 16))), "credential_id_mismatch"),
    ]

    @Test("sign-in refuses a wrong type and an id that is not the rawId", arguments: 0..<2)
    func signIn(_ index: Int) throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "identity@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        let (status, json) = try phone.exchange(session: session, credential: Self.edited(credential, Self.cases[index].member, Self.cases[index].value))
        #expect(status == 400 && json["reason"] == .string(Self.cases[index].reason), "\(json.serialized)")
        // The untouched response signs in on a new session.
        _ = try phone.signIn()
    }

    @Test("sign-up refuses a wrong type and an id that is not the rawId, creating nothing", arguments: 0..<2)
    func signUp(_ index: Int) throws {
        let server = try TestServer()
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "identity@signet.test")
        let (status, json) = try phone.exchange(session: session, credential: Self.edited(credential, Self.cases[index].member, Self.cases[index].value))
        #expect(status == 400 && json["reason"] == .string(Self.cases[index].reason), "\(json.serialized)")
        #expect(server.counts["users"] == 0)
    }
}
