import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// How an access token was presented at a resource: `Authorization: Bearer` (RFC 6750) or
/// `Authorization: DPoP` with its proof (RFC 9449 §7).
public struct TokenPresentation: Sendable {
    public enum Scheme: Sendable { case bearer, dpop }
    public var scheme: Scheme
    /// The `DPoP` header.
    public var proof: String?
    public var method: String
    /// The request's URL as the client addressed it: the issuer and the path.
    public var url: String
    public init(scheme: Scheme, proof: String?, method: String, url: String) {
        self.scheme = scheme
        self.proof = proof
        self.method = method
        self.url = url
    }
}

extension Ceremonies {
    /// The DPoP proof of a token request (RFC 9449 §5), checked before anything is written: the
    /// proof itself, the nonce when `dpop.nonce` is on, and single use across instances (its
    /// `jti` marked in the store). `nil` without a `DPoP` header, unless the client requires one.
    /// `path`: the endpoint the proof is for (the token endpoint, or `/oauth/par`, RFC 9449 §10.1).
    func tokenBinding(_ client: ClientConfiguration, context: RequestContext, path: String = "/oauth/token") throws -> DPoPProof? {
        guard let header = context.dpop else {
            if client.dpop == "required" { throw AuthError(.dpopInvalid, "client \(client.id) requires DPoP and the request has no DPoP header") }
            return nil
        }
        let proof: DPoPProof
        do {
            proof = try DPoP.verify(header, for: DPoPRequest(method: "POST", url: configuration.issuer + path), now: clock())
        } catch {
            throw AuthError(.dpopInvalid, "DPoP proof: \(error.detail)")
        }
        if configuration.dpopNonce {
            guard let nonce = proof.nonce, isCurrentNonce(nonce) else {
                var error = AuthError(.useDPoPNonce, proof.nonce == nil ? "the proof has no nonce" : "the proof's nonce is not a current one")
                error.dpopNonce = dpopNonce()
                throw error
            }
        }
        return proof
    }

    /// The write that uses `proof` up, for the grant's own transaction (single use across
    /// instances, decided by the database's primary key, at no commit of its own).
    /// The mark is time-ordered like an auth session's ID (the proof's `iat` in milliseconds,
    /// then 10 bytes of the hash of its key and `jti`), so its insert lands at the B-tree's right
    /// edge, in a page already cached, not in a random one.
    func proofMark(_ proof: DPoPProof?) -> [StoreWrite] {
        guard let proof else { return [] }
        return [.useProof(id: Self.usedMarkID(seconds: proof.iat, "dpop \(proof.jkt) \(proof.jti)"), expiresAt: (proof.iat + DPoP.window + 1) * 1000)]
    }

    /// A single-use mark's key: `seconds` in milliseconds (6 bytes, big-endian), then 10 bytes of
    /// the SHA-256 of `name`, what is used once.
    static func usedMarkID(seconds: Int64, _ name: String) -> [UInt8] {
        let ms = UInt64(max(0, seconds)) * 1000
        return (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + Digest.sha256.hash(Array(name.utf8)).prefix(10)
    }

    /// A nonce for DPoP proofs (RFC 9449 §8): the current five-minute window and its HMAC under a
    /// key derived from the KEK, so any instance can check any instance's nonce.
    public func dpopNonce() -> String {
        nonce(window: Int64(clock().timeIntervalSince1970) / 300)
    }

    func nonce(window: Int64) -> String {
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: window >> (8 * (7 - $0))) }
        return Base64URL.encode(bytes + Digest.sha256.hmac(key: nonceKey, data: bytes).prefix(16))
    }

    /// This window's nonce or the last one's.
    func isCurrentNonce(_ nonce: String) -> Bool {
        let window = Int64(clock().timeIntervalSince1970) / 300
        return [window, window - 1].contains { ConstantTime.equals(Array(self.nonce(window: $0).utf8), Array(nonce.utf8)) }
    }

    /// A DPoP-bound access token's presentation at Signet's own endpoints (RFC 9449 §7): the
    /// `DPoP` scheme with a proof of this request, by the bound key, with `ath`; a bound token
    /// presented as a bearer token is refused, as is a bearer token under the DPoP scheme.
    func checkPresentation(_ presentation: TokenPresentation?, token: String, claims: JSONObject) throws {
        let bound = claims["cnf"]?["jkt"]?.string
        switch (bound, presentation?.scheme ?? .bearer) {
        case (nil, .bearer): return
        case (nil, .dpop): throw resourceError(AuthError(.tokenInvalid, "a token without cnf.jkt presented with the DPoP scheme"))
        case (.some, .bearer): throw resourceError(AuthError(.tokenInvalid, "a DPoP-bound token presented as a bearer token"))
        case (.some(let jkt), .dpop):
            guard let presentation, let header = presentation.proof else { throw resourceError(AuthError(.dpopInvalid, "no DPoP header")) }
            let proof: DPoPProof
            do {
                proof = try DPoP.verify(header, for: DPoPRequest(method: presentation.method, url: presentation.url, accessToken: token), now: clock())
            } catch {
                throw resourceError(AuthError(.dpopInvalid, "DPoP proof: \(error.detail)"))
            }
            guard proof.jkt == jkt else { throw resourceError(AuthError(.dpopKeyMismatch, "the proof's key is not the token's cnf.jkt")) }
            let now = Int64(clock().timeIntervalSince1970)
            switch replayCache.use(jkt: proof.jkt, jti: proof.jti, holder: claims["sub"]?.string ?? "", until: proof.iat + DPoP.window + 1, now: now) {
            case .fresh: break
            case .replayed: throw resourceError(AuthError(.dpopReplayed, "the proof's jti was used before on this instance"))
            case .full(let wait, let holder):
                throw Self.rateLimited(wait, holder ? "the account presented more than \(replayCache.perHolder) DPoP proofs to this instance within a proof's window"
                                                    : "this instance holds \(replayCache.capacity) DPoP proofs, its most")
            }
        }
    }

    /// A resource's refusal: 401 with the DPoP challenge (RFC 9449 §7.1).
    func resourceError(_ error: AuthError) -> AuthError {
        var error = error
        error.status = 401
        let code = error.reason == .tokenInvalid ? "invalid_token" : "invalid_dpop_proof"
        error.challenges = [AuthError.dpopChallenge(#"error="\#(code)""#)]
        return error
    }
}
