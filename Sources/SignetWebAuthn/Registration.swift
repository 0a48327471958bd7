public import SignetCrypto
public import Foundation

/// What a registration ceremony gives the relying party to check (WebAuthn L3 §7.1).
public struct RegistrationRequest: Sendable {
    public var clientDataJSON: [UInt8]
    public var attestationObject: [UInt8]
    /// `rawId` of the response, compared with the credential ID in authenticator data.
    public var rawID: [UInt8]?
    /// The challenge the relying party issued for this ceremony.
    public var expectedChallenge: [UInt8]
    public var requireUserVerification: Bool
    /// A registration the browser made with `mediation: "conditional"` (WebAuthn L3 §7.1 step
    /// 14): the authenticator may create it without a user gesture, so UP may be clear.
    public var conditional = false

    public init(clientDataJSON: [UInt8], attestationObject: [UInt8], rawID: [UInt8]? = nil, expectedChallenge: [UInt8], requireUserVerification: Bool,
                conditional: Bool = false) {
        self.conditional = conditional
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.rawID = rawID
        self.expectedChallenge = expectedChallenge
        self.requireUserVerification = requireUserVerification
    }
}

/// Attestation types (WebAuthn L3 §6.5.4).
public enum AttestationType: String, Sendable, Codable {
    case none, `self`, basic, attca, anonca
}

/// Whether an attestation chain reached a configured trust anchor: a policy value, not an error.
public enum AttestationTrust: Sendable, Equatable {
    /// `none` or self attestation: there is no chain to trust.
    case notApplicable
    case trusted
    case untrusted(String)
}

/// A verified registration: everything the relying party stores as the credential record (§7.1 step 27).
public struct RegistrationResult: Sendable {
    public let credentialID: [UInt8]
    /// The credential public key, as its COSE_Key bytes.
    public let publicKey: [UInt8]
    public let algorithm: COSEAlgorithm
    public let signCount: UInt32
    public let aaguid: UUID
    public let format: String
    public let attestationType: AttestationType
    public let trust: AttestationTrust
    /// The attestation certificate chain (x5c), leaf first; empty without one.
    public let attestationChain: [Certificate]
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backupState: Bool
    public let authenticatorExtensions: CBORMap?
}

extension RelyingParty {
    /// Verifies a registration ceremony (WebAuthn L3 §7.1) at time `now`. Throws for every
    /// failed step; attestation trust is returned as a value. Checking that the credential ID is
    /// not yet registered (step 26) and storing it (step 27) are the caller's.
    public func verifyRegistration(_ request: RegistrationRequest, now: Date) throws(WebAuthnError) -> RegistrationResult {
        // Steps 5–10: client data.
        let clientData = try checkClientData(
            request.clientDataJSON, type: "webauthn.create", challenge: request.expectedChallenge, section: "7.1", first: 5)
        // Step 11: hash = SHA-256(clientDataJSON).
        let clientDataHash = Digest.sha256.hash(clientData.raw)
        // Step 12: CBOR-decode the attestationObject into fmt, authData and attStmt.
        let attestation = try AttestationObject(request.attestationObject)
        let authData = attestation.authData
        // Steps 13–16: rpIdHash, UP, UV, BE/BS.
        try checkAuthenticatorData(authData, requireUserVerification: request.requireUserVerification, requireUserPresence: !request.conditional,
                                   section: "7.1", first: 13)
        guard let attested = authData.attestedCredential else {
            throw .malformed("AT flag clear: no attested credential data", step: "7.1 step 12")
        }
        // Step 25: credentialId is at most 1023 bytes (checked before anything is built on it).
        guard attested.credentialID.count <= AuthenticatorData.maxCredentialIDLength, !attested.credentialID.isEmpty else {
            throw .malformed("credential ID length \(attested.credentialID.count) outside 1...1023", step: "7.1 step 25")
        }
        if let rawID = request.rawID, rawID != attested.credentialID {
            throw WebAuthnError(.credentialIdMismatch, "rawId differs from the credential ID in authenticator data", step: "7.1 step 25")
        }
        // Step 19: the credential public key's alg is one of pubKeyCredParams.
        let key = try COSEKey(attested.publicKeyBytes)
        guard allowedAlgorithms.contains(key.algorithm) else {
            throw WebAuthnError(.algorithmNotAllowed, "credential algorithm \(key.algorithm) is not allowed", step: "7.1 step 19")
        }
        // Step 20: extension outputs are accepted as given; the caller applies its own policy.
        // Steps 21–22: determine the format and verify the attestation statement.
        let context = AttestationContext(
            authData: authData, clientDataHash: clientDataHash, credentialKey: key, statement: attestation.statement,
            now: now, policy: self)
        let outcome = try context.verify(format: attestation.format)
        // Steps 23–24: assess the attestation's trustworthiness against the configured anchors.
        let trust: AttestationTrust
        if let leaf = outcome.chain.first {
            if let failure = Certificate.verifyChain(leaf: leaf, intermediates: Array(outcome.chain.dropFirst()), anchors: trustAnchors, at: now) {
                trust = .untrusted(failure)
            } else {
                trust = .trusted
            }
        } else {
            trust = .notApplicable
        }
        // In this core step 26 has nothing to check; register the credential (step 27) with these values.
        return RegistrationResult(
            credentialID: attested.credentialID, publicKey: attested.publicKeyBytes, algorithm: key.algorithm,
            signCount: authData.signCount, aaguid: UUID(uuid: uuidTuple(attested.aaguid)), format: attestation.format,
            attestationType: outcome.type, trust: trust, attestationChain: outcome.chain,
            userVerified: authData.userVerified, backupEligible: authData.backupEligible, backupState: authData.backupState,
            authenticatorExtensions: authData.extensions)
    }
}

func uuidTuple(_ b: [UInt8]) -> uuid_t {
    (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
}

/// The attestation object (§6.5.4): `fmt`, `authData` and `attStmt`.
struct AttestationObject {
    let format: String
    let authData: AuthenticatorData
    let statement: CBORMap

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard let map = try CBORDecoder(maxDepth: 8, maxLength: 64 * 1024).decode(bytes).map else {
            throw .malformed("attestationObject is not a CBOR map", step: "7.1 step 12")
        }
        guard let format = map[text: "fmt"]?.text, let authData = map[text: "authData"]?.bytes,
              let statement = map[text: "attStmt"]?.map, map.count == 3
        else { throw .malformed("attestationObject needs exactly fmt, authData and attStmt", step: "7.1 step 12") }
        self.format = format
        self.authData = try AuthenticatorData(authData)
        self.statement = statement
    }
}
