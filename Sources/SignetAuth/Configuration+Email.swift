/// Email one-time codes (DESIGN.md, "Email codes"): `passwordless.*`.
public struct PasswordlessSettings: Sendable, Equatable {
    /// Digits in a code, 6 to 10.
    public var codeLength = 6
    /// Seconds a code is valid.
    public var codeTTL = 300
    /// Wrong tries a code survives; the next one finds it dead.
    public var maxAttempts = 5
    /// Whether a verified address without an account gets one (Auth0's sign-up by code).
    public var signup = true
    /// Seconds between two codes for one address.
    public var sendInterval = 30
    /// Codes one address may be sent per hour.
    public var sendsPerHour = 10
    public init() {}
}

/// Where mail goes (`email.*`): an SMTP relay, or in development the `.eml` folder.
public struct EmailSettings: Sendable, Equatable {
    /// `smtp://host:587` (STARTTLS) or `smtps://host:465`; without it mail is written to
    /// ``outboxDirectory`` when one is set (development sets `signet-mail`), else not sent at all.
    public var smtpURL: String?
    /// The sender address; `no-reply@{rp id}` when unset.
    public var from: String?
    public var username: String?
    /// From `email.password_file` or `SIGNET_EMAIL_PASSWORD`; never from the file itself.
    public var password: String?
    /// CAs to trust for the relay instead of the system's.
    public var caFile: String?
    /// The folder of `.eml` files when there is no relay.
    public var outboxDirectory: String?
    /// Seconds before the first retry of a failed delivery; each retry waits twice as long, up
    /// to ``maxRetryDelay``.
    public var retryDelay = 5
    public var maxRetryDelay = 600
    /// Deliveries tried before a message is dropped (and the drop audited).
    public var maxDeliveries = 12
    public init() {}

    /// Whether mail can go anywhere.
    public var canSend: Bool { smtpURL != nil || outboxDirectory != nil }
}

extension ServerConfiguration {
    /// The sender address of Signet's mail.
    public var mailFrom: String { email.from ?? "no-reply@" + rpID }
}
