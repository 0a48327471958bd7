/// Why a WebAuthn response was refused. Equal by ``reason``; ``detail`` is for logs and
/// developers (it never contains secrets), ``step`` names the spec step that failed.
public struct WebAuthnError: Error, Hashable, CustomStringConvertible, Sendable {
    /// A stable, machine-readable failure reason (the `reason` of Signet's HTTP errors).
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let malformed = Reason(rawValue: "malformed")
        public static let typeMismatch = Reason(rawValue: "type_mismatch")
        public static let challengeMismatch = Reason(rawValue: "challenge_mismatch")
        public static let originNotAllowed = Reason(rawValue: "origin_not_allowed")
        public static let crossOriginNotAllowed = Reason(rawValue: "cross_origin_not_allowed")
        public static let topOriginNotAllowed = Reason(rawValue: "top_origin_not_allowed")
        public static let tokenBindingInvalid = Reason(rawValue: "token_binding_invalid")
        public static let rpIdHashMismatch = Reason(rawValue: "rp_id_hash_mismatch")
        public static let userNotPresent = Reason(rawValue: "user_not_present")
        public static let userNotVerified = Reason(rawValue: "user_not_verified")
        public static let backupStateInvalid = Reason(rawValue: "backup_state_invalid")
        public static let backupEligibilityChanged = Reason(rawValue: "backup_eligibility_changed")
        public static let algorithmNotAllowed = Reason(rawValue: "algorithm_not_allowed")
        public static let attestationInvalid = Reason(rawValue: "attestation_invalid")
        public static let attestationUntrusted = Reason(rawValue: "attestation_untrusted")
        public static let credentialIdMismatch = Reason(rawValue: "credential_id_mismatch")
        public static let credentialUnknown = Reason(rawValue: "credential_unknown")
        public static let userHandleMismatch = Reason(rawValue: "user_handle_mismatch")
        public static let signatureInvalid = Reason(rawValue: "signature_invalid")
        public static let counterRegression = Reason(rawValue: "counter_regression")

        /// Every reason above (SignetAPI's list of reasons holds each of them; a test checks it).
        public static let all: [Reason] = [
            .malformed, .typeMismatch, .challengeMismatch, .originNotAllowed, .crossOriginNotAllowed, .topOriginNotAllowed,
            .tokenBindingInvalid, .rpIdHashMismatch, .userNotPresent, .userNotVerified, .backupStateInvalid, .backupEligibilityChanged,
            .algorithmNotAllowed, .attestationInvalid, .attestationUntrusted, .credentialIdMismatch, .credentialUnknown,
            .userHandleMismatch, .signatureInvalid, .counterRegression,
        ]
    }

    public let reason: Reason
    public let detail: String
    /// The WebAuthn Level 3 step, e.g. "7.1 step 8", or the attestation format section.
    public let step: String

    public init(_ reason: Reason, _ detail: String, step: String = "") {
        self.reason = reason
        self.detail = detail
        self.step = step
    }

    public var description: String { step.isEmpty ? "\(reason): \(detail)" : "\(reason) (\(step)): \(detail)" }

    public static func == (lhs: WebAuthnError, rhs: WebAuthnError) -> Bool { lhs.reason == rhs.reason }
    public func hash(into hasher: inout Hasher) { hasher.combine(reason) }

    static func malformed(_ detail: String, step: String = "") -> WebAuthnError { WebAuthnError(.malformed, detail, step: step) }
}
