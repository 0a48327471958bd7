import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
import Testing

@Suite struct OptionsTests {
    /// A deterministic random source: 0, 1, 2, ... so the challenge is predictable in tests.
    static let counting: RandomBytes = { count in (0..<count).map { UInt8($0 & 0xff) } }

    @Test("creation options carry the RP, user, challenge, algorithms and policy of DESIGN.md")
    func creation() throws {
        var rp = RelyingParty(id: "signet.test", name: "Signet", origins: ["https://signet.test"])
        rp.allowedAlgorithms = [.es256, .eddsa, .rs256]
        let user = UserEntity(id: [9, 9, 9], name: "ada@signet.test", displayName: "Ada")
        let options = rp.creationOptions(user: user, excludeCredentials: [CredentialDescriptor(id: [1, 2], transports: ["internal"])], random: Self.counting)
        #expect(options.challenge == Array(0..<32))
        let json = options.json
        #expect(json["rp"] == .object(["id": .string("signet.test"), "name": .string("Signet")]))
        #expect(json["user"]?["id"] == .string(Base64URL.encode([9, 9, 9])))
        #expect(json["user"]?["displayName"] == .string("Ada"))
        #expect(json["challenge"] == .string(Base64URL.encode(Array(0..<32))))
        #expect(json["pubKeyCredParams"]?.array?.compactMap { $0["alg"]?.int64 } == [-7, -8, -257])
        #expect(json["excludeCredentials"]?.array?.first?["id"] == .string("AQI"))
        #expect(json["excludeCredentials"]?.array?.first?["transports"] == .array([.string("internal")]))
        #expect(json["authenticatorSelection"]?["residentKey"] == .string("required"))
        #expect(json["authenticatorSelection"]?["userVerification"] == .string("preferred"))
        #expect(json["attestation"] == .string("none"))
        #expect(json["extensions"]?["credProps"] == .bool(true))
        #expect(json["timeout"] == .number("300000"))
    }

    @Test("request options: allowCredentials only when a user is known")
    func request() {
        let rp = RelyingParty(id: "signet.test", origins: ["https://signet.test"])
        let discoverable = rp.requestOptions(random: Self.counting).json
        #expect(discoverable["allowCredentials"] == nil)
        #expect(discoverable["rpId"] == .string("signet.test"))
        let named = rp.requestOptions(allowCredentials: [CredentialDescriptor(id: [7])], userVerification: "required", random: Self.counting).json
        #expect(named["allowCredentials"]?.array?.count == 1)
        #expect(named["userVerification"] == .string("required"))
    }

    @Test("options drive a real ceremony end to end")
    func roundTrip() throws {
        let rp = RelyingParty(id: Harness.rpID, origins: [Harness.origin])
        let user = UserEntity(id: SecureRandom.bytes(32), name: "ada", displayName: "Ada")
        let creation = rp.creationOptions(user: user, random: SecureRandom.bytes)
        let authenticator = SoftwareAuthenticator()
        let challengeText = try #require(creation.json["challenge"]?.string)
        let challenge = try #require(Base64URL.decode(challengeText))
        let response = try authenticator.register(rpID: Harness.rpID, origin: Harness.origin, challenge: challenge, userHandle: user.id, userName: user.name)
        let registered = try rp.verifyRegistration(
            RegistrationRequest(clientDataJSON: response.clientDataJSON, attestationObject: response.attestationObject, expectedChallenge: creation.challenge, requireUserVerification: true),
            now: .now)
        let request = rp.requestOptions(random: SecureRandom.bytes)
        let assertion = try authenticator.authenticate(rpID: Harness.rpID, origin: Harness.origin, challenge: request.challenge)
        let result = try rp.verifyAuthentication(
            AuthenticationRequest(credentialID: assertion.credentialID, clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData, signature: assertion.signature, userHandle: assertion.userHandle, expectedChallenge: request.challenge, requireUserVerification: true),
            credential: CredentialRecord(id: registered.credentialID, publicKey: registered.publicKey, signCount: registered.signCount, backupEligible: registered.backupEligible, userHandle: user.id),
            userIdentified: false)
        #expect(result.userVerified)
    }
}
