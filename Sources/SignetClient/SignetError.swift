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

    public init(_ code: Code, status: Int? = nil, _ message: String, serverReason: String? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.serverReason = serverReason
    }

    /// The error for a server's answer with `reason`.
    public init(serverReason reason: String, status: Int, _ message: String) {
        self.init(Reason(rawValue: reason) ?? .unrecognized, status: status, message, serverReason: reason)
    }

    public var description: String { "\(serverReason ?? code.rawValue)\(status.map { " (\($0))" } ?? ""): \(message)" }
    public static func == (lhs: SignetError, rhs: SignetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
