import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
import Testing

/// One assertion with exactly one defect.
struct AssertionDefect: Sendable, CustomTestStringConvertible {
    let name: String
    let reason: WebAuthnError.Reason
    var tamper = Tamper()
    var requireUV = false
    var userIdentified = true
    var dropUserHandle = false
    var allowCredentials: [[UInt8]]?
    var record: @Sendable (inout CredentialRecord) -> Void = { _ in }

    var testDescription: String { "\(name) → \(reason)" }

    init(_ name: String, _ reason: WebAuthnError.Reason, build: (inout AssertionDefect) -> Void = { _ in }) {
        self.name = name
        self.reason = reason
        build(&self)
    }
}

/// WebAuthn L3 §7.2: every verification step, broken alone.
@Suite struct AuthenticationStepTests {
    /// Registers a credential, then runs one assertion for it.
    static func assert(
        _ defect: AssertionDefect? = nil, algorithm: COSEAlgorithm = .es256,
        settings: SoftwareAuthenticator.Settings = SoftwareAuthenticator.Settings()
    ) throws -> Result<AuthenticationResult, WebAuthnError> {
        let harness = Harness(settings: settings)
        let registered = try harness.register(algorithm: algorithm).get()
        var record = CredentialRecord(
            id: registered.credentialID, publicKey: registered.publicKey, signCount: registered.signCount,
            backupEligible: registered.backupEligible, userHandle: harness.userHandle)
        defect?.record(&record)
        let challenge = SecureRandom.bytes(32)
        let response = try harness.authenticator.authenticate(
            rpID: Harness.rpID, origin: Harness.origin, challenge: challenge, tamper: defect?.tamper ?? .none)
        let request = AuthenticationRequest(
            credentialID: response.credentialID, clientDataJSON: response.clientDataJSON,
            authenticatorData: response.authenticatorData, signature: response.signature,
            userHandle: defect?.dropUserHandle == true ? nil : response.userHandle, expectedChallenge: challenge,
            requireUserVerification: defect?.requireUV ?? false, allowCredentials: defect?.allowCredentials)
        return Result { () throws(WebAuthnError) in
            try harness.rp.verifyAuthentication(request, credential: record, userIdentified: defect?.userIdentified ?? false)
        }
    }

    static let defects: [AssertionDefect] = [
        .init("step 5: credential not in allowCredentials", .credentialUnknown) { $0.allowCredentials = [SecureRandom.bytes(32)] },
        .init("step 7: credential ID differs from the record", .credentialUnknown) { $0.record = { $0.id = SecureRandom.bytes(32) } },
        .init("step 6: userHandle of another user", .userHandleMismatch) { $0.record = { $0.userHandle = SecureRandom.bytes(32) } },
        .init("step 6: discoverable sign-in without userHandle", .userHandleMismatch) {
            $0.dropUserHandle = true
            $0.userIdentified = false
        },
        .init("step 10: clientDataJSON is not JSON", .malformed) { $0.tamper.clientData = { $0.replacement = Array("[".utf8) } },
        .init("step 10: clientDataJSON nested too deep", .malformed) {
            $0.tamper.clientData = { $0.replacement = Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8) }
        },
        .init("step 11: type is webauthn.create", .typeMismatch) { $0.tamper.clientData = { $0.type = "webauthn.create" } },
        .init("step 12: challenge of another ceremony", .challengeMismatch) {
            $0.tamper.clientData = { $0.challenge = Base64URL.encode(SecureRandom.bytes(32)) }
        },
        .init("step 13: origin of another site", .originNotAllowed) { $0.tamper.clientData = { $0.origin = "http://signet.test" } },
        .init("step 14: crossOrigin true but not expected", .crossOriginNotAllowed) { $0.tamper.clientData = { $0.crossOrigin = true } },
        .init("step 8: authenticator data truncated", .malformed) { $0.tamper.authenticatorData = { $0.rpIdHash = Array($0.rpIdHash.prefix(20)) } },
        .init("step 8: ED set without extensions", .malformed) { $0.tamper.authenticatorData = { $0.flags.insert(.extensionData) } },
        .init("step 8: extensions without ED", .malformed) {
            $0.tamper.authenticatorData = { $0.extensions = CBOREncoder.encode(.map(CBORMap([(.text("credProtect"), .int(1))]))) }
        },
        .init("step 15: rpIdHash of another RP", .rpIdHashMismatch) {
            $0.tamper.authenticatorData = { $0.rpIdHash = Digest.sha256.hash(Array("evil.test".utf8)) }
        },
        .init("step 16: UP clear", .userNotPresent) { $0.tamper.authenticatorData = { $0.flags.remove(.userPresent) } },
        .init("step 17: UV clear while required", .userNotVerified) {
            $0.requireUV = true
            $0.tamper.authenticatorData = { $0.flags.remove(.userVerified) }
        },
        .init("step 18: BS set without BE", .backupStateInvalid) { $0.tamper.authenticatorData = { $0.flags.remove(.backupEligible) } },
        .init("step 19: BE cleared since registration", .backupEligibilityChanged) {
            $0.tamper.authenticatorData = { $0.flags.subtract([.backupEligible, .backupState]) }
        },
        .init("step 19: BE set though registered without", .backupEligibilityChanged) { $0.record = { $0.backupEligible = false } },
        .init("step 22: signature bytes altered", .signatureInvalid) { $0.tamper.signature = { $0[$0.count - 3] ^= 0x40 } },
        .init("step 22: signature truncated", .signatureInvalid) { $0.tamper.signature = { $0.removeLast() } },
        .init("step 22: signature empty", .signatureInvalid) { $0.tamper.signature = { $0 = [] } },
        .init("step 22: signed by another key", .signatureInvalid) { $0.tamper.signingKey = try! PrivateKey.generate(.ec(.p256)) },
        .init("step 22: stored key is not a COSE key", .malformed) { $0.record = { $0.publicKey = [0xa1, 0x01, 0x02] } },
    ]

    @Test("assertion step broken alone", arguments: defects)
    func brokenStep(_ defect: AssertionDefect) throws {
        #expect(try Self.assert(defect).reason == defect.reason)
    }

    @Test("the same assertion without a defect verifies")
    func baseline() throws {
        let result = try Self.assert().get()
        #expect(result.signCount == .bothZero)
        #expect(result.userVerified && result.backupEligible && result.backupState)
    }

    @Test("every algorithm signs in", arguments: COSEAlgorithm.all)
    func algorithms(_ algorithm: COSEAlgorithm) throws {
        let result = try Self.assert(algorithm: algorithm).get()
        #expect(result.algorithm == algorithm)
    }

    @Test("username-first sign-in needs no userHandle")
    func usernameFirst() throws {
        var defect = AssertionDefect("no handle, user known", .malformed)
        defect.dropUserHandle = true
        defect.userIdentified = true
        #expect(throws: Never.self) { try Self.assert(defect).get() }
    }

    @Test("a counter that grows is reported; one that does not is a value, not a throw")
    func counter() throws {
        var settings = SoftwareAuthenticator.Settings()
        settings.counter = true
        let increased = try Self.assert(settings: settings).get()
        #expect(increased.signCount == .increased)
        #expect(increased.newSignCount == 1)
        var replayed = AssertionDefect("stored count ahead", .malformed)
        replayed.record = { $0.signCount = 10 }
        let regression = try Self.assert(replayed, settings: settings).get()
        #expect(regression.signCount == .regression(stored: 10, received: 1))
        #expect(regression.newSignCount == 10)
    }
}
