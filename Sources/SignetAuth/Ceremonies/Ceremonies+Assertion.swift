import SignetAPI
import SignetWebAuthn

/// A verified assertion, not yet recorded: the passkey's use for the store's guarded statement.
struct VerifiedAssertion {
    let userID: String
    let use: CredentialUse
    let amr: [String]
}

extension Ceremonies {
    /// The one assertion path (WebAuthn L3 §7.2), for sign-in and for passkey-approved actions:
    /// checks the credential's identity, finds the passkey (in memory, else in the store), checks
    /// that it belongs to `expectedUser` when one is named, verifies the signature over
    /// `challenge`, and applies the AAGUID policy to the passkey's stored model. The result is
    /// recorded by ``record(_:)`` or by a sign-in's commit, both of which run the store's one
    /// guarded use.
    func verifyAssertion(
        _ credential: CredentialJSON, challenge: [UInt8], expectedUser: String?, allowCredentials: [[UInt8]]?,
        requireUserVerification: Bool, client: String?, context: RequestContext, otherAccount: Reason = .credentialUnknown
    ) throws -> VerifiedAssertion {
        let rawID = try credentialIdentity(credential)
        guard credential.response.attestationObject == nil else { throw AuthError(.ceremonyMismatch, "a registration was sent for an assertion") }
        var (entry, cached) = try credentialEntry(rawID)
        if let expectedUser, expectedUser != entry.userID {
            throw AuthError(otherAccount, "this passkey belongs to another account than the one named")
        }
        let handle = try credential.response.userHandle.map { text in try Self.bytes(text, "userHandle") }
        let assertion = AuthenticationRequest(
            credentialID: rawID, clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
            authenticatorData: try Self.bytes(credential.response.authenticatorData, "authenticatorData"),
            signature: try Self.bytes(credential.response.signature, "signature"), userHandle: handle?.isEmpty == true ? nil : handle,
            expectedChallenge: challenge, requireUserVerification: requireUserVerification,
            allowCredentials: allowCredentials?.isEmpty == false ? allowCredentials : nil)
        func verify(_ entry: CredentialCache.Entry) throws -> AuthenticationResult {
            let record = CredentialRecord(
                id: rawID, publicKey: entry.publicKey, signCount: UInt32(clamping: entry.signCount), backupEligible: entry.backupEligible,
                userHandle: entry.userHandle)
            do {
                return try rp.verifyAuthentication(assertion, credential: record, userIdentified: expectedUser != nil)
            } catch {
                throw AuthError.webAuthn(error)
            }
        }
        var result = try verify(entry)
        if case .regression = result.signCount, cached {
            // The count kept in memory may be behind the database's: judge by the stored one.
            credentialCache.remove(rawID)
            (entry, _) = try credentialEntry(rawID)
            result = try verify(entry)
        }
        if case .regression(let stored, let received) = result.signCount {
            throw counterRegression(stored: Int64(stored), received: Int64(received), user: entry.userID, client: client, credential: rawID, context: context)
        }
        // A model the AAGUID policy no longer admits, or that the metadata reports compromised
        // (checked once the signature shows the caller holds the key, so nobody else learns
        // the passkey's model).
        if let refusal = authenticatorRefusal(entry.aaguid, for: .signIn) { throw AuthError(.authenticatorNotAllowed, "this passkey: \(refusal)") }
        let use = CredentialUse(
            credentialID: rawID, userID: entry.userID, publicKey: entry.publicKey, signCount: Int64(result.newSignCount),
            backupState: result.backupState, at: nowMillis)
        return VerifiedAssertion(userID: entry.userID, use: use, amr: Self.passkeyMethods(userVerified: result.userVerified, hardwareBound: entry.hardwareBound))
    }

    /// Records a verified assertion's use on its own (a passkey-approved action).
    func record(_ assertion: VerifiedAssertion, client: String?, context: RequestContext) throws {
        if let refusal = try store.recordUse(assertion.use) { throw refused(refusal, assertion.use, client: client, context: context) }
        credentialCache.setSignCount(assertion.use.credentialID, assertion.use.signCount)
    }

    /// The error for a guarded use the store refused; the memory of the passkey follows the store.
    func refused(_ refusal: UseRefusal, _ use: CredentialUse, client: String?, context: RequestContext) -> AuthError {
        switch refusal {
        case .credentialUnknown:
            credentialCache.remove(use.credentialID)
            return AuthError(.credentialUnknown, "this passkey is not registered")
        case .credentialRevoked:
            credentialCache.remove(use.credentialID)
            return AuthError(.credentialRevoked, "this passkey was revoked")
        case .counterRegression(let stored):
            credentialCache.setSignCount(use.credentialID, stored)
            return counterRegression(stored: stored, received: use.signCount, user: use.userID, client: client, credential: use.credentialID, context: context)
        case .userBlocked:
            audit(.signIn, "failure", reason: Reason.userBlocked.rawValue, user: use.userID, client: client, credential: Base64URL.encode(use.credentialID), context: context)
            return AuthError(.userBlocked, "the account is blocked")
        }
    }

    func counterRegression(stored: Int64, received: Int64, user: String, client: String?, credential: [UInt8], context: RequestContext) -> AuthError {
        audit(.possibleClonedAuthenticator, "failure", reason: "counter_regression", user: user, client: client, credential: Base64URL.encode(credential), context: context)
        return AuthError(.counterRegression, "signature counter went from \(stored) to \(received): possible cloned authenticator")
    }

    /// The passkey `id` as an assertion verifies it: from memory, or read from the store (and then
    /// kept); `cached` tells which.
    func credentialEntry(_ id: [UInt8]) throws -> (entry: CredentialCache.Entry, cached: Bool) {
        try credentialCache.entry(id) {
            guard let (row, user) = try store.credentialAndUser(credentialID: id) else {
                throw AuthError(.credentialUnknown, "this passkey is not registered")
            }
            guard row.revokedAt == nil else { throw AuthError(.credentialRevoked, "this passkey was revoked") }
            return CredentialCache.Entry(row, handle: user.handle, hardwareBound: isHardwareBound(row))
        }
    }
}
