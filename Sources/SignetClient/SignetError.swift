import Foundation

/// Every failure the SDK reports. Equal by ``code``. Codes mirror the server's `reason`s, plus the
/// client-side outcomes an app must tell apart: ``Code/canceled`` (show the existing sign-in
/// form, not an error) and ``Code/deviceKeyInvalidated`` (call `enrollDeviceKey()`).
public struct SignetError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The user closed the system sheet (ASAuthorizationError 1001, Android cancellation).
        public static let canceled = Code(rawValue: "canceled")
        /// The device key is gone or unusable (biometric set changed, key revoked): re-enrol.
        public static let deviceKeyInvalidated = Code(rawValue: "device_key_invalidated")
        /// No session, or the session ended (refresh token reused, revoked or expired): sign in.
        public static let notSignedIn = Code(rawValue: "not_signed_in")
        /// The server could not be reached.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The server answered 5xx.
        public static let serverError = Code(rawValue: "server_error")
        /// The answer was not what the API promises.
        public static let invalidResponse = Code(rawValue: "invalid_response")
        /// No passkey on this device for the account (the platform reported none).
        public static let noCredential = Code(rawValue: "no_credential")
        // Server reasons apps commonly branch on; any other arrives with its own raw value.
        public static let userExists = Code(rawValue: "user_exists")
        public static let lastCredential = Code(rawValue: "last_credential")
        public static let rateLimited = Code(rawValue: "rate_limited")
        public static let credentialRevoked = Code(rawValue: "credential_revoked")
        public static let refreshTokenReused = Code(rawValue: "refresh_token_reused")
    }

    public let code: Code
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// Text for logs and developers; never shown to users as is.
    public let message: String

    public init(_ code: Code, status: Int? = nil, _ message: String) {
        self.code = code
        self.status = status
        self.message = message
    }

    public var description: String { "\(code.rawValue)\(status.map { " (\($0))" } ?? ""): \(message)" }
    public static func == (lhs: SignetError, rhs: SignetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
