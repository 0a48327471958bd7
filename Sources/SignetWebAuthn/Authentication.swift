import SignetCrypto

/// What an authentication ceremony gives the relying party to check (WebAuthn L3 §7.2).
public struct AuthenticationRequest: Sendable {
    /// `rawId` of the response.
    public var credentialID: [UInt8]
    public var clientDataJSON: [UInt8]
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    /// `response.userHandle`, when the authenticator returned one.
    public var userHandle: [UInt8]?
    public var expectedChallenge: [UInt8]
    public var requireUserVerification: Bool
    /// The options' `allowCredentials` IDs, when the ceremony named them (§7.2 step 5).
    public var allowCredentials: [[UInt8]]?

    public init(credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?, expectedChallenge: [UInt8], requireUserVerification: Bool, allowCredentials: [[UInt8]]? = nil) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.expectedChallenge = expectedChallenge
        self.requireUserVerification = requireUserVerification
        self.allowCredentials = allowCredentials
    }
}

/// The stored credential record an assertion is checked against (§4, "credential record").
public struct CredentialRecord: Sendable {
    public var id: [UInt8]
    /// COSE_Key bytes stored at registration.
    public var publicKey: [UInt8]
    public var signCount: UInt32
    /// BE as registered; `nil` when unknown (records from before Level 3).
    public var backupEligible: Bool?
    /// The user handle of the account that owns the credential.
    public var userHandle: [UInt8]

    public init(id: [UInt8], publicKey: [UInt8], signCount: UInt32, backupEligible: Bool?, userHandle: [UInt8]) {
        self.id = id
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.userHandle = userHandle
    }
}

/// The signature-counter outcome (§6.1.1, §7.2 step 22): a policy value for the caller.
public enum SignCountOutcome: Sendable, Equatable {
    /// The counter grew: store the new value.
    case increased
    /// Both the stored and the received count are zero: the authenticator has no counter.
    case bothZero
    /// The counter did not grow: a sign of a cloned authenticator.
    case regression(stored: UInt32, received: UInt32)
}

/// A verified assertion.
public struct AuthenticationResult: Sendable {
    public let credentialID: [UInt8]
    public let algorithm: COSEAlgorithm
    /// The count to store (the received one; unchanged on regression).
    public let newSignCount: UInt32
    public let signCount: SignCountOutcome
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backupState: Bool
    public let authenticatorExtensions: CBORMap?
}

extension RelyingParty {
    /// Verifies an authentication ceremony (WebAuthn L3 §7.2) against the stored `credential`.
    /// `userIdentified` says whether the user was identified before the ceremony (username-first);
    /// a discoverable sign-in (`false`) requires a user handle. The counter is returned as a value.
    public func verifyAuthentication(
        _ request: AuthenticationRequest, credential: CredentialRecord, userIdentified: Bool
    ) throws(WebAuthnError) -> AuthenticationResult {
        // Step 5: the credential is one of allowCredentials, when the options named any.
        if let allowed = request.allowCredentials, !allowed.contains(request.credentialID) {
            throw WebAuthnError(.credentialUnknown, "credential is not in allowCredentials", step: "7.2 step 5")
        }
        guard request.credentialID == credential.id else {
            throw WebAuthnError(.credentialUnknown, "response credential ID differs from the credential record", step: "7.2 step 7")
        }
        // Step 6: the user handle, when present, names the credential's owner; required if the
        // user was not identified before the ceremony.
        if let handle = request.userHandle {
            guard ConstantTime.equals(handle, credential.userHandle) else {
                throw WebAuthnError(.userHandleMismatch, "userHandle does not belong to the credential's owner", step: "7.2 step 6")
            }
        } else if !userIdentified {
            throw WebAuthnError(.userHandleMismatch, "discoverable sign-in without a userHandle", step: "7.2 step 6")
        }
        // Steps 9–14: client data.
        _ = try checkClientData(request.clientDataJSON, type: "webauthn.get", challenge: request.expectedChallenge, section: "7.2", first: 9)
        // Step 8: authenticator data.
        let authData = try AuthenticatorData(request.authenticatorData)
        // Steps 15–18: rpIdHash, UP, UV, BE/BS.
        try checkAuthenticatorData(authData, requireUserVerification: request.requireUserVerification, section: "7.2", first: 15)
        // Step 19: BE must not change from what was registered.
        if let registered = credential.backupEligible, registered != authData.backupEligible {
            throw WebAuthnError(.backupEligibilityChanged, "BE flag changed from \(registered) to \(authData.backupEligible)", step: "7.2 step 19")
        }
        // Step 20: extension outputs are accepted as given.
        // Step 21: hash = SHA-256(cData).
        // Step 22: sig is a valid signature over authData || hash with the stored public key.
        let key = try credentialKey(credential.publicKey)
        var message = request.authenticatorData
        message.reserveCapacity(message.count + 32)
        message += Digest.sha256.hash(request.clientDataJSON)
        guard key.verify(signature: request.signature, message: message) else {
            throw WebAuthnError(.signatureInvalid, "assertion signature does not verify with the stored \(key.algorithm) key", step: "7.2 step 22")
        }
        // Step 23: the signature counter.
        let outcome: SignCountOutcome
        if authData.signCount == 0 && credential.signCount == 0 {
            outcome = .bothZero
        } else if authData.signCount > credential.signCount {
            outcome = .increased
        } else {
            outcome = .regression(stored: credential.signCount, received: authData.signCount)
        }
        let newCount: UInt32 = if case .regression = outcome { credential.signCount } else { authData.signCount }
        return AuthenticationResult(
            credentialID: credential.id, algorithm: key.algorithm, newSignCount: newCount, signCount: outcome,
            userVerified: authData.userVerified, backupEligible: authData.backupEligible, backupState: authData.backupState,
            authenticatorExtensions: authData.extensions)
    }
}
