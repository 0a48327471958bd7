/// One of the account's security events as its owner sees it (`GET /me/events`), as the
/// account page's "Recent security events" lists them: what happened, when, from where, and to
/// which of its keys.
public struct AccountEvent: Codable, Sendable, Equatable {
    /// The event's ID in the audit trail (the Management API's `log_id`).
    public var id: String
    /// Signet's event, one of ``AuditKind`` (`passkey_added`, `sign_in`, …).
    public var type: String
    /// Seconds since 1970.
    public var at: Int64
    /// `success` or `failure`.
    public var outcome: String
    /// An operator's change (the Management API, `signet admin`, SCIM).
    public var by_operator: Bool
    /// Where it came from; none for an operator's change, whose address is the operator's.
    public var address: String?
    /// The app it happened in, when it was one: its client ID and name.
    public var client_id: String?
    public var client_name: String?
    /// The passkey or device key it was about, and its name as it is now (a removed one's too).
    public var key_id: String?
    public var key_name: String?
    /// A failure's reason, one of ``Reason`` (`last_credential`, `signature_invalid`, …), for an
    /// app to say in its own words what was refused; never the failure's detail.
    public var reason: String?

    public init(id: String, type: String, at: Int64, outcome: String, by_operator: Bool, address: String?, client_id: String?, client_name: String?,
                key_id: String?, key_name: String?, reason: String? = nil) {
        self.id = id
        self.type = type
        self.at = at
        self.outcome = outcome
        self.by_operator = by_operator
        self.address = address
        self.client_id = client_id
        self.client_name = client_name
        self.key_id = key_id
        self.key_name = key_name
        self.reason = reason
    }
}

/// Answer to `GET /me/events`: the newest first.
public struct AccountEventList: Codable, Sendable, Equatable {
    public var events: [AccountEvent]
    public init(events: [AccountEvent]) { self.events = events }
}
