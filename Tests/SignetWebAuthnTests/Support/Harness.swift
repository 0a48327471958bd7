import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
import Testing

/// One relying party and one software authenticator, ready to run ceremonies.
struct Harness {
    static let rpID = "signet.test"
    static let origin = "https://signet.test"

    var rp: RelyingParty
    let authenticator: SoftwareAuthenticator
    let challenge = SecureRandom.bytes(32)
    let userHandle = SecureRandom.bytes(32)

    init(settings: SoftwareAuthenticator.Settings = SoftwareAuthenticator.Settings()) {
        rp = RelyingParty(id: Self.rpID, origins: [Self.origin])
        rp.allowedAlgorithms = COSEAlgorithm.all
        authenticator = SoftwareAuthenticator(settings: settings)
    }

    func register(
        algorithm: COSEAlgorithm = .es256, tamper: Tamper = .none, requireUV: Bool = false, rawID: [UInt8]? = nil,
        now: Date = Date()
    ) throws -> Result<RegistrationResult, WebAuthnError> {
        let response = try authenticator.register(
            rpID: Self.rpID, origin: Self.origin, challenge: challenge, userHandle: userHandle, userName: "ada@signet.test",
            algorithm: algorithm, tamper: tamper)
        let request = RegistrationRequest(
            clientDataJSON: response.clientDataJSON, attestationObject: response.attestationObject,
            rawID: rawID ?? response.credentialID, expectedChallenge: challenge, requireUserVerification: requireUV)
        return Result { () throws(WebAuthnError) in try rp.verifyRegistration(request, now: now) }
    }
}

extension Result where Failure == WebAuthnError {
    /// The failure's reason, or `nil` on success.
    var reason: WebAuthnError.Reason? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }
}
