/// The newest one-time code of an email address for one purpose (DESIGN.md, "Email codes"):
/// only its HMAC is stored. `email` is the key the code is kept under: the address for a
/// sign-in code, the purpose and the address for any other. A key has at most one code: a new
/// code replaces the old, so only the newest counts.
public struct EmailCodeRow: Sendable, Equatable {
    public var email: String
    public var id: String
    /// HMAC-SHA-256 of the code under the server's code key.
    public var codeHash: [UInt8]
    public var clientID: String
    /// Tries made against this code, counted before each comparison.
    public var attempts: Int
    public var createdAt: Int64
    public var expiresAt: Int64
    public var usedAt: Int64?

    public init(email: String, id: String, codeHash: [UInt8], clientID: String, attempts: Int = 0, createdAt: Int64, expiresAt: Int64, usedAt: Int64? = nil) {
        self.email = email
        self.id = id
        self.codeHash = codeHash
        self.clientID = clientID
        self.attempts = attempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// What counting a try against an address's code found.
public enum EmailCodeAttempt: Sendable, Equatable {
    /// The try was counted (the row shows the count including it): compare now.
    case counted(EmailCodeRow)
    /// The address has no code.
    case none
    case expired
    /// The code's tries are spent: it is dead.
    case exhausted
    case used
}

/// A message waiting in the outbox, written in the same transaction as what it tells.
public struct OutboxRow: Sendable, Equatable {
    public var id: String
    /// `otp`, `recovery_opened`, `passkey_added`, ...: what the message is, never what it says.
    public var kind: String
    public var recipient: String
    /// The whole RFC 5322 message, CRLF line ends.
    public var message: [UInt8]
    public var createdAt: Int64
    /// Not sent before this time (retries move it on).
    public var dueAt: Int64
    /// A code's message is dropped unsent once its code has expired.
    public var expiresAt: Int64?
    /// Deliveries tried so far.
    public var attempts: Int

    public init(id: String, kind: String, recipient: String, message: [UInt8], createdAt: Int64, dueAt: Int64, expiresAt: Int64? = nil, attempts: Int = 0) {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.message = message
        self.createdAt = createdAt
        self.dueAt = dueAt
        self.expiresAt = expiresAt
        self.attempts = attempts
    }
}

/// One recovery code of an account, stored as its HMAC.
public struct RecoveryCodeRow: Sendable, Equatable {
    public var hash: [UInt8]
    public var createdAt: Int64
    public var usedAt: Int64?
    /// The ID of the code key `hash` was made under (``KeyEncryptionKey/id(_:)`` of it); `nil`
    /// for a code made before schema 14, which may be under any key the database kept.
    public var keyID: String?
    public init(hash: [UInt8], createdAt: Int64, usedAt: Int64? = nil, keyID: String? = nil) {
        self.hash = hash
        self.createdAt = createdAt
        self.usedAt = usedAt
        self.keyID = keyID
    }
}

/// A recovery (DESIGN.md, "Recovery, slower and stricter than sign-in"): opened when a code
/// session adds a credential to an account that has one; what it added is held until `holdUntil`.
public struct RecoveryRow: Sendable, Equatable {
    public enum State: String, Sendable {
        case open, finished, cancelled
    }
    public var id: String
    public var userID: String
    public var openedAt: Int64
    public var holdUntil: Int64
    /// The session (`sid`) that opened it: cancelling ends it too.
    public var session: String?
    public var state: State
    public var closedAt: Int64?

    public init(id: String, userID: String, openedAt: Int64, holdUntil: Int64, session: String?, state: State = .open, closedAt: Int64? = nil) {
        self.id = id
        self.userID = userID
        self.openedAt = openedAt
        self.holdUntil = holdUntil
        self.session = session
        self.state = state
        self.closedAt = closedAt
    }
}

/// What cancelling a recovery revoked.
public struct RecoveryCancellation: Sendable, Equatable {
    public var recoveries: [RecoveryRow]
    public var credentials: [[UInt8]]
    public var deviceKeys: [String]
    public init(recoveries: [RecoveryRow], credentials: [[UInt8]], deviceKeys: [String]) {
        self.recoveries = recoveries
        self.credentials = credentials
        self.deviceKeys = deviceKeys
    }
}

/// The outbox rows a sender claimed, and those it dropped because their code had expired.
public struct MailClaim: Sendable, Equatable {
    public var claimed: [OutboxRow]
    public var dropped: Int
    public init(claimed: [OutboxRow], dropped: Int) {
        self.claimed = claimed
        self.dropped = dropped
    }
}

/// One queue of the outbox as `/metrics` shows it: `mail` or `backchannel_logout`.
public struct OutboxBacklog: Sendable, Equatable {
    public var queue: String
    public var count: Int
    /// When the longest-waiting message was queued, in milliseconds.
    public var oldestCreated: Int64
    public init(queue: String, count: Int, oldestCreated: Int64) {
        self.queue = queue
        self.count = count
        self.oldestCreated = oldestCreated
    }
}
