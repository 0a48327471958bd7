public import SignetAPI

/// Every failure the SDK reports. Equal by ``code``. The codes are SignetAPI's ``Reason`` list,
/// the one the server answers with, plus the client-side outcomes an app must tell apart:
/// ``Reason/canceled`` (show the existing sign-in form, not an error) and
/// ``Reason/deviceKeyInvalidated`` (call `enrollDeviceKey()`).
public struct SignetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason codes: the server's and the SDK's own.
    public typealias Code = Reason

    public let code: Code
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// Text for logs and developers; never shown to users as is.
    public let message: String
    /// The server's `reason` as it was sent, also when this SDK does not know it (``code`` is then
    /// ``Reason/unrecognized``).
    public let serverReason: String?
    /// Seconds the server asked to wait before trying again (`Retry-After`, RFC 9110 §10.2.3):
    /// with ``Reason/rateLimited`` (429), and with a 503 ``Reason/serverError``.
    public let retryAfter: Int?

    public init(_ code: Code, status: Int? = nil, _ message: String, serverReason: String? = nil, retryAfter: Int? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.serverReason = serverReason
        self.retryAfter = retryAfter
    }

    /// The error for a server's answer with `reason`.
    public init(serverReason reason: String, status: Int, _ message: String, retryAfter: Int? = nil) {
        self.init(Reason(rawValue: reason) ?? .unrecognized, status: status, message, serverReason: reason, retryAfter: retryAfter)
    }

    public var description: String { "\(serverReason ?? code.rawValue)\(status.map { " (\($0))" } ?? ""): \(message)" }
    public static func == (lhs: SignetError, rhs: SignetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
