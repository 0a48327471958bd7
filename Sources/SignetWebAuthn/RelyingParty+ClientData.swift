import SignetCrypto

extension RelyingParty {
    /// The client-data steps shared by both ceremonies (§7.1 steps 5–10, §7.2 steps 9–14).
    /// `section` is "7.1" or "7.2"; `first` is the number of the UTF-8 decode step.
    func checkClientData(
        _ bytes: [UInt8], type expectedType: String, challenge: [UInt8], section: String, first: Int
    ) throws(WebAuthnError) -> CollectedClientData {
        func step(_ n: Int) -> String { "\(section) step \(first + n)" }
        // Steps 5–6 / 9–10: UTF-8 decode and parse clientDataJSON.
        let c = try CollectedClientData(bytes)
        // Step 7 / 11: C.type is webauthn.create / webauthn.get.
        guard c.type == expectedType else {
            throw WebAuthnError(.typeMismatch, "clientDataJSON.type is \"\(c.type)\", expected \"\(expectedType)\"", step: step(2))
        }
        // Step 8 / 12: C.challenge equals the base64url encoding of the options' challenge.
        guard let got = c.challenge, ConstantTime.equals(got, challenge) else {
            throw WebAuthnError(.challengeMismatch, "clientDataJSON.challenge is not the issued challenge", step: step(3))
        }
        // Step 9 / 13: C.origin is an expected origin.
        guard origins.containsExactly(c.origin) else {
            throw WebAuthnError(.originNotAllowed, "origin \"\(c.origin)\" is not allowed", step: step(4))
        }
        // Step 10 / 14: crossOrigin and topOrigin only where an embedding is expected.
        if c.crossOrigin && !allowCrossOrigin {
            throw WebAuthnError(.crossOriginNotAllowed, "ceremony ran in a cross-origin iframe", step: step(5))
        }
        if let top = c.topOrigin {
            guard allowCrossOrigin else {
                throw WebAuthnError(.crossOriginNotAllowed, "topOrigin present but no cross-origin embedding is expected", step: step(5))
            }
            guard topOrigins.containsExactly(top) else {
                throw WebAuthnError(.topOriginNotAllowed, "topOrigin \"\(top)\" is not allowed", step: step(5))
            }
        }
        // Level 2 token binding: when the member is an object its status must be a known value.
        if c.tokenBindingInvalid {
            throw WebAuthnError(.tokenBindingInvalid, "tokenBinding.status \"\(c.tokenBindingStatus ?? "")\" is not valid", step: "5.8.1")
        }
        return c
    }

    /// The authenticator-data flag steps shared by both ceremonies (§7.1 steps 13–16, §7.2 steps 15–18).
    func checkAuthenticatorData(
        _ a: AuthenticatorData, requireUserVerification: Bool, requireUserPresence: Bool = true, section: String, first: Int
    ) throws(WebAuthnError) {
        func step(_ n: Int) -> String { "\(section) step \(first + n)" }
        // Step 13 / 15: rpIdHash is SHA-256 of the RP ID.
        guard a.rpIdHash.elementsEqual(idHash) else {
            throw WebAuthnError(.rpIdHashMismatch, "rpIdHash is not SHA-256(\"\(id)\")", step: step(0))
        }
        // Step 14 / 16: UP is set (for a registration, unless it was made with conditional mediation).
        guard a.userPresent || !requireUserPresence else { throw WebAuthnError(.userNotPresent, "UP flag is clear", step: step(1)) }
        // Step 15 / 17: UV is set when user verification is required.
        if requireUserVerification && !a.userVerified {
            throw WebAuthnError(.userNotVerified, "user verification required but UV flag is clear", step: step(2))
        }
        // Step 16 / 18: BS may be set only if BE is set.
        if a.backupState && !a.backupEligible {
            throw WebAuthnError(.backupStateInvalid, "BS flag set without BE", step: step(3))
        }
    }
}
