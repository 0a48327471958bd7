// The device authorization grant's rows (RFC 8628; DESIGN.md, "A new device, approved by an old one").

/// A device sign-in waiting for approval: the new device polls with the device code (stored
/// as its SHA-256), the user types or scans the user code on a device already signed in.
public struct DeviceCodeRow: Sendable, Equatable {
    public enum Status: String, Sendable { case pending, approved, denied, used }
    public var hash: [UInt8]
    /// Eight consonants, without the dash (`BCDFGHJK`).
    public var userCode: String
    public var clientID: String
    public var scope: String
    /// What the approving phone is shown: the requesting device's address and User-Agent.
    public var remote: String
    public var userAgent: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    /// Seconds between polls; raised by 5 at each `slow_down` (RFC 8628 §3.5).
    public var interval: Int
    public var status: Status
    /// Set by the approval: the account and the device key that approved it.
    public var userID: String?
    public var approvedBy: String?
    public init(hash: [UInt8], userCode: String, clientID: String, scope: String, remote: String, userAgent: String?, createdAt: Int64, expiresAt: Int64,
                interval: Int, status: Status = .pending, userID: String? = nil, approvedBy: String? = nil) {
        self.hash = hash
        self.userCode = userCode
        self.clientID = clientID
        self.scope = scope
        self.remote = remote
        self.userAgent = userAgent
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.interval = interval
        self.status = status
        self.userID = userID
        self.approvedBy = approvedBy
    }
}

/// One poll of a device code, counted in one statement.
public enum DevicePoll: Sendable, Equatable {
    case unknown
    /// Polled sooner than its interval: the interval is now 5 s longer.
    case slowDown(interval: Int)
    case pending
    case expired
    case denied
    /// Approved and not yet used: the caller issues tokens and uses it in the same transaction.
    case approved(DeviceCodeRow)
}
