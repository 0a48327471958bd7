import SignetCrypto
import Foundation
import SignetAPI
import SignetWebAuthn

extension Ceremonies {
    /// The credential's raw ID, after the checks every WebAuthn response gets before its
    /// verification (WebAuthn L3 §5.1, `PublicKeyCredential`): `type` is `public-key` and `id` is
    /// the base64url of `rawId`.
    func credentialIdentity(_ credential: CredentialJSON) throws -> [UInt8] {
        guard credential.type == "public-key" else { throw AuthError.malformed("credential type must be public-key") }
        let rawID = try Self.bytes(credential.rawId, "rawId")
        guard Base64URL.decode(credential.id) == rawID else {
            throw AuthError(.credentialIdMismatch, "credential.id is not the base64url of credential.rawId")
        }
        return rawID
    }

    /// A base64url member of a WebAuthn response.
    static func bytes(_ text: String?, _ name: String) throws -> [UInt8] {
        guard let text, let bytes = Base64URL.decode(text) else { throw AuthError.malformed("\(name) is missing or not base64url") }
        return bytes
    }

    /// The one registration path (WebAuthn L3 §7.1), for sign-up and for adding a passkey:
    /// verifies `credential` against the session's challenge, applies the attestation trust
    /// policy and returns the passkey's row for `owner`, not yet stored.
    ///
    /// Trust policy (DESIGN.md, "Security rules"): with trust anchors or attestation metadata
    /// configured, a registration is accepted only when its attestation chains to a trust anchor
    /// or to a root the metadata lists for its AAGUID (FIDO MDS 3.0 §3.1.6); `none` and self
    /// attestation (which chain to nothing) and a chain to any other root are refused with
    /// `attestation_untrusted`. Without either, every verified attestation is accepted. Then the
    /// AAGUID lists and the metadata's compromise reports (``authenticatorRefusal(_:for:)``):
    /// `authenticator_not_allowed`. A passkey made without a name, of a model
    /// ``authenticatorName(_:)`` cannot name by its AAGUID (iCloud Keychain's is all zeros), is
    /// named after where it was made (``madeInName(userAgent:app:)``: the request's `User-Agent`,
    /// and `app`, the client, when an app makes it through the API), so that an account's
    /// passkeys can be told apart.
    func verifyRegistration(_ credential: CredentialJSON, session: AuthSession, owner: String, name: String?,
                            userAgent: String? = nil, app: String? = nil) throws -> (row: CredentialRow, userVerified: Bool) {
        let rawID = try credentialIdentity(credential)
        guard credential.response.attestationObject != nil else { throw AuthError(.ceremonyMismatch, "an assertion was sent for a registration") }
        let request = RegistrationRequest(
            clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
            attestationObject: try Self.bytes(credential.response.attestationObject, "attestationObject"),
            rawID: rawID, expectedChallenge: session.challenge, requireUserVerification: session.requireUserVerification,
            conditional: session.kind == .addPasskeyConditional)
        let result: RegistrationResult
        do {
            result = try rp.verifyRegistration(request, now: clock())
        } catch {
            throw AuthError.webAuthn(error)
        }
        let aaguid = result.aaguid.uuidString.lowercased()
        var attested = false
        var root: [UInt8]?
        if requiresAttestation {
            guard !result.attestationChain.isEmpty else {
                throw AuthError(.attestationUntrusted, "\(result.format) attestation (\(result.attestationType)) chains to no configured root")
            }
            guard let reached = attestationRoot(result.attestationChain, anchors: attestationAnchors(for: aaguid)) else {
                let because = if case .untrusted(let why) = result.trust { ": \(why)" } else { "" }
                throw AuthError(.attestationUntrusted, "the attestation does not chain to a configured root, nor to one the attestation metadata lists for AAGUID \(aaguid)\(because)")
            }
            attested = true
            root = reached
        }
        if let refusal = authenticatorRefusal(aaguid, for: .registration) { throw AuthError(.authenticatorNotAllowed, refusal) }
        if try store.credential(id: result.credentialID) != nil { throw AuthError(.credentialExists, "this passkey is already registered") }
        let now = nowMillis
        let row = CredentialRow(
            id: result.credentialID, userID: owner, publicKey: result.publicKey, algorithm: result.algorithm.rawValue,
            signCount: Int64(result.signCount), aaguid: aaguid, format: result.format,
            backupEligible: result.backupEligible, backupState: result.backupState,
            transports: Self.storedTransports(credential.response.transports ?? []),
            name: name ?? (authenticatorName(aaguid) == nil ? madeInName(userAgent: userAgent, app: app) : nil), createdAt: now,
            attested: attested, attestationRoot: root)
        return (row, result.userVerified)
    }

    /// The anchor of `anchors` a chain reaches, as the SHA-256 of its certificate: the first
    /// that verifies the chain alone (a chain may reach more than one; any will do, as long as
    /// it is one the operator still trusts). `nil` when none does.
    func attestationRoot(_ chain: [Certificate], anchors: [Certificate]) -> [UInt8]? {
        guard let leaf = chain.first else { return nil }
        let now = clock()
        return anchors.first { Certificate.verifyChain(leaf: leaf, intermediates: Array(chain.dropFirst()), anchors: [$0], at: now) == nil }
            .map { Digest.sha256.hash($0.der) }
    }

    /// Whether a passkey signs in as hardware-bound (`amr` `hwk`, `acr` `phrh`): attested and
    /// not backup eligible (``CredentialRow/isHardwareBound``), and the root its attestation
    /// chained to is still trusted for its model (``trustsRoot(_:of:)``). One registered before
    /// the root was recorded keeps the mark while any root is trusted.
    public func isHardwareBound(_ row: CredentialRow) -> Bool {
        guard row.isHardwareBound else { return false }
        guard let root = row.attestationRoot else { return !trustedRoots.isEmpty }
        return trustsRoot(root, of: row.aaguid)
    }
}
