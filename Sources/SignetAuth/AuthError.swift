public import SignetAPI
import SignetWebAuthn

/// Why a ceremony or a policy refused: a ``Reason`` from SignetAPI's one list, the detail for the
/// log and the audit row only, and what the answer needs besides (a 404 where the path named the
/// thing, a `Retry-After`).
public struct AuthError: Error, Sendable, CustomStringConvertible {
    public let reason: Reason
    /// For logs and the audit trail; never sent to a client.
    public let detail: String
    /// Sent as `error_description` instead of the reason's text: only for problems with the shape
    /// of the client's own request (which member is missing), never for a verification's detail.
    public let publicDetail: String?
    /// The status when it is not ``Reason/status``: 404 for a resource named by the path.
    public var status: Int
    /// Seconds to wait, for `429 rate_limited`.
    public var retryAfter: Int?
    /// The `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9449 §7.1, RFC 9470 §3), one header
    /// each, when the reason has any.
    public var challenges: [String]
    /// A nonce for the client's next DPoP proof (RFC 9449 §8: the `DPoP-Nonce` header).
    public var dpopNonce: String?
    /// Already in the audit trail where it arose (a failed client authentication): the
    /// ceremony it ends writes no second row for it.
    var audited = false

    public init(_ reason: Reason, _ detail: String, publicDetail: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.publicDetail = publicDetail
        status = reason.status
        switch reason {
        case .tokenMissing: challenges = ["Bearer"]
        case .tokenInvalid, .tokenAudienceInvalid: challenges = [#"Bearer error="invalid_token""#]
        case .insufficientScope: challenges = [#"Bearer error="insufficient_scope""#]
        default: challenges = []
        }
    }

    /// A DPoP challenge (RFC 9449 §7.1): its parameters, if any, then the proof algorithms.
    public static func dpopChallenge(_ parameters: Substring?) -> String {
        let algs = #"algs="\#(DPoP.algorithms.joined(separator: " "))""#
        guard let parameters, !parameters.isEmpty else { return "DPoP " + algs }
        return "DPoP \(parameters), \(algs)"
    }

    /// The same refusal for a token presented with the DPoP scheme (RFC 9449 §7.1): each Bearer
    /// challenge becomes a DPoP challenge with the same parameters and the proof algorithms.
    public func underDPoP() -> AuthError {
        var error = self
        error.challenges = challenges.map { challenge in
            guard challenge.hasPrefix("Bearer") else { return challenge }
            return Self.dpopChallenge(challenge.dropFirst(6).drop { $0 == " " })
        }
        return error
    }

    /// The request's shape is wrong; `detail` says how, to the client too.
    public static func malformed(_ detail: String) -> AuthError { AuthError(.malformed, detail, publicDetail: detail) }

    /// A resource named by the request's path (`/me/passkeys/{id}`) is not on the account: 404.
    public static func notFound(_ reason: Reason, _ detail: String) -> AuthError {
        var error = AuthError(reason, detail)
        error.status = 404
        return error
    }

    /// A relying-party verification failure: its step's reason, with the step and detail for the log.
    static func webAuthn(_ e: WebAuthnError) -> AuthError {
        if e.reason == .malformed { return .malformed("the WebAuthn response is malformed: \(e.detail)") }
        return AuthError(Reason(rawValue: e.reason.rawValue) ?? .malformed, e.step.isEmpty ? e.detail : "\(e.step): \(e.detail)")
    }

    /// A refusal reported by the store as a typed code.
    static func store(_ e: StoreError) -> AuthError {
        switch e.code {
        case .unavailable: AuthError(.databaseUnavailable, e.detail)
        case .storageFull: AuthError(.storageFull, e.detail)
        case .sessionUsed: AuthError(.authSessionUnknown, "the auth_session was already used")
        case .emailTaken: AuthError(.userExists, "an account with this email exists")
        case .credentialTaken: AuthError(.credentialExists, "this passkey is already registered")
        case .deviceKeyLimit: AuthError(.deviceKeyLimit, "the account has the most live device keys allowed")
        case .passkeyLimit: AuthError(.passkeyLimit, "the account has the most live passkeys allowed (\(e.detail))")
        case .signingKeyLimit: AuthError(.signingKeyLimit, "\(e.detail), the most allowed (\(KeyRing.heldLimit)); revoke a retired one, or wait until one is destroyed")
        case .rateLimited: AuthError(.rateLimited, e.detail)
        case .userBlocked: AuthError(.userBlocked, "the account is blocked")
        case .proofUsed: AuthError(.dpopReplayed, "the DPoP proof's jti was used before")
        case .conflict: AuthError(.conflict, e.detail)
        default: AuthError(.internalError, e.detail)
        }
    }

    /// Any error a ceremony throws, as the refusal it stands for: an ``AuthError`` as it is, a
    /// store's typed refusal as its reason, anything else as an internal error.
    public init(_ error: any Error) {
        switch error {
        case let error as AuthError: self = error
        case let error as StoreError: self = .store(error)
        case let error as WebAuthnError: self = .webAuthn(error)
        case let error as SCIM.Failure: self = error.error
        default: self.init(.internalError, "\(error)")
        }
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
