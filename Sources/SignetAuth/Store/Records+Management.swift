// What the Management API, `signet admin` and the database-held clients read and write
// (DESIGN.md, "Management API and operations").

/// An account as an administrator sees it: the record and how it has been used.
public struct ManagedUser: Sendable, Equatable {
    public var user: UserRecord
    /// When an administrator or the account last changed it (milliseconds); `nil` if never.
    public var updatedAt: Int64?
    /// The newest sign-in: a passkey's last use or a code sign-in (milliseconds).
    public var lastLogin: Int64?
    /// Passkey uses plus code sign-ins.
    public var loginsCount: Int64
    /// Auth0's `app_metadata` and `user_metadata`: JSON objects as text, `nil` for none.
    public var appMetadata: String?
    public var userMetadata: String?
    public init(user: UserRecord, updatedAt: Int64?, lastLogin: Int64?, loginsCount: Int64, appMetadata: String? = nil, userMetadata: String? = nil) {
        self.appMetadata = appMetadata
        self.userMetadata = userMetadata
        self.user = user
        self.updatedAt = updatedAt
        self.lastLogin = lastLogin
        self.loginsCount = loginsCount
    }
}

/// Which accounts a search returns, oldest first, a page at a time.
public struct UserQuery: Sendable, Equatable {
    public enum Email: Sendable, Equatable {
        case any
        case exactly(String)
        case prefix(String)
    }
    /// The columns a search may be sorted by (Auth0's `sort=field:1` or `field:-1`).
    public enum Order: String, Sendable, Equatable, CaseIterable {
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case email
        /// The later of the last code sign-in and the last passkey use, as the user shows it.
        case lastLogin = "last_login"
    }
    /// Accounts whose `app_metadata` or `user_metadata` holds a string at a path.
    public struct MetadataMatch: Sendable, Equatable {
        /// `app_metadata` or `user_metadata`.
        public var column: String
        /// Object keys from the top: letters, digits, `_` and `-` each.
        public var path: [String]
        public var value: String
        public init(column: String, path: [String], value: String) {
            self.column = column
            self.path = path
            self.value = value
        }
    }
    public var email: Email
    public var metadata: MetadataMatch?
    /// The account an identity provider names so (`app_metadata.scim_user_name`, in any case;
    /// SCIM's `userName` kept apart from the address); with it, `email` and `metadata` are
    /// not read.
    public var directoryName: String?
    /// Accounts with a passkey, not revoked, of this authenticator model (an AAGUID in lower
    /// case): those a Metadata Service report of that model locks out. With it, `email` and
    /// `metadata` are not read.
    public var passkeyModel: String?
    public var offset: Int
    public var limit: Int
    public var order: Order
    public var descending: Bool
    public init(email: Email = .any, metadata: MetadataMatch? = nil, directoryName: String? = nil, passkeyModel: String? = nil, offset: Int = 0,
                limit: Int = 50, order: Order = .createdAt, descending: Bool = false) {
        self.passkeyModel = passkeyModel
        self.metadata = metadata
        self.directoryName = directoryName
        self.email = email
        self.offset = offset
        self.limit = limit
        self.order = order
        self.descending = descending
    }
}

/// An administrator's change to an account; `nil` members stay as they are.
public struct UserChange: Sendable, Equatable {
    public var blocked: Bool?
    /// `.some(nil)` clears the name.
    public var name: String??
    public var email: String?
    public var emailVerified: Bool?
    /// Whether sign-in by email code is off (``Store/setEmailSignIn(userID:off:writes:)``).
    public var emailSignInOff: Bool?
    /// `app_metadata` and `user_metadata` written, each only while it still reads as what the
    /// change was made from (a merge of that read): else the store throws `conflict`.
    public var appMetadata: MetadataChange?
    public var userMetadata: MetadataChange?
    public init(blocked: Bool? = nil, name: String?? = nil, email: String? = nil, emailVerified: Bool? = nil, emailSignInOff: Bool? = nil,
                appMetadata: MetadataChange? = nil, userMetadata: MetadataChange? = nil) {
        self.appMetadata = appMetadata
        self.userMetadata = userMetadata
        self.blocked = blocked
        self.name = name
        self.email = email
        self.emailVerified = emailVerified
        self.emailSignInOff = emailSignInOff
    }
    public var isEmpty: Bool { blocked == nil && name == nil && email == nil && emailVerified == nil && emailSignInOff == nil && appMetadata == nil && userMetadata == nil }
}

/// Metadata (a JSON object as text, `nil` for none) from what was read to what is written.
public struct MetadataChange: Sendable, Equatable {
    public var from: String?
    public var to: String?
    public init(from: String?, to: String?) {
        self.from = from
        self.to = to
    }
}

/// Which of an account's live sessions of one kind a read gives (``Store/webSessions(userID:now:_:)``,
/// ``Store/sessions(userID:now:_:)``): newest first, ties by ID, at most `limit`; with `id`,
/// that session only; with `after`, those that come after that place in the order.
public struct SessionQuery: Sendable, Equatable {
    public var id: String?
    public var after: SessionPosition?
    public var limit: Int
    /// Browsers' sessions only: those last seen after this time (milliseconds), so that sessions
    /// idle past `web.session_idle_ttl` take no place in a list.
    public var seenAfter: Int64?

    public init(id: String? = nil, after: SessionPosition? = nil, limit: Int, seenAfter: Int64? = nil) {
        self.id = id
        self.after = after
        self.limit = limit
        self.seenAfter = seenAfter
    }
}

/// A session's place in its list: when it began (milliseconds) and its ID.
public struct SessionPosition: Sendable, Equatable {
    public var createdAt: Int64
    public var id: String

    public init(createdAt: Int64, id: String) {
        self.createdAt = createdAt
        self.id = id
    }
}

/// One live session of an account: a refresh-token family.
public struct SessionRow: Sendable, Equatable {
    public var id: String
    public var clientID: String
    /// The family's first token (the sign-in) and its newest (the last refresh), milliseconds.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var expiresAt: Int64
    /// Seconds since 1970, as the tokens carry it.
    public var authTime: Int64
    public var amr: [String]
    public var credential: String?
    /// Where the family's first token (the sign-in) and its newest (the last refresh) were
    /// asked for; a family from before Signet kept them has neither.
    public var initial: RequestOrigin
    public var last: RequestOrigin

    public init(id: String, clientID: String, createdAt: Int64, updatedAt: Int64, expiresAt: Int64, authTime: Int64, amr: [String], credential: String?,
                initial: RequestOrigin = RequestOrigin(), last: RequestOrigin = RequestOrigin()) {
        self.initial = initial
        self.last = last
        self.id = id
        self.clientID = clientID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.amr = amr
        self.credential = credential
    }
}

/// An audit row with the ID checkpoint paging continues from.
public struct AuditEntry: Sendable, Equatable {
    public var id: Int64
    public var event: AuditEvent
    public init(id: Int64, event: AuditEvent) {
        self.id = id
        self.event = event
    }
}

/// Which audit rows a read returns.
public struct AuditQuery: Sendable, Equatable {
    /// Rows after this ID, oldest first (checkpoint paging); `nil`: the newest rows, newest first.
    public var after: Int64?
    /// Rows before this ID, newest first (the next page back); ignored with `after`.
    public var before: Int64?
    public var userID: String?
    /// Only rows of these kinds, each with its outcome when given; `nil`: every kind.
    public var events: [AuditMatch]?
    public var limit: Int
    /// Rows skipped first (a page of `GET /api/v2/users/{id}/logs`).
    public var offset: Int
    /// Oldest first without `after` too.
    public var oldestFirst: Bool
    public init(after: Int64? = nil, before: Int64? = nil, userID: String? = nil, events: [AuditMatch]? = nil, limit: Int = 50,
                offset: Int = 0, oldestFirst: Bool = false) {
        self.after = after
        self.before = before
        self.userID = userID
        self.events = events
        self.limit = limit
        self.offset = offset
        self.oldestFirst = oldestFirst
    }
}

/// An audit row's kind and, when given, its outcome: one term of ``AuditQuery/events``.
public struct AuditMatch: Sendable, Equatable {
    public var kind: String
    public var outcome: String?
    public init(kind: String, outcome: String? = nil) {
        self.kind = kind
        self.outcome = outcome
    }
}

/// A client kept in the database (`signet admin clients add`), beside those of the configuration.
public struct ClientRow: Sendable, Equatable {
    public var id: String
    public var name: String
    /// `confidential` or `public`.
    public var type: String
    public var secretHash: [UInt8]?
    public var grants: [String]
    public var scopes: [String]
    public var redirectURIs: [String]
    /// `nil`: the deployment's audiences.
    public var audiences: [String]?
    public var createdAt: Int64
    /// OIDC RP-Initiated Logout §3 and Back-Channel Logout §2.2, as for a configured client.
    public var postLogoutRedirectURIs: [String]
    public var backchannelLogoutURI: String?
    /// A `private_key_jwt` client's public keys: a JWK Set as JSON text; `nil` for the others.
    public var jwks: String?
    /// RFC 9126 §6: its authorization requests come through `/oauth/par` only.
    public var requirePushedRequests: Bool
    /// Where a `private_key_jwt` client publishes its keys instead of ``jwks``.
    public var jwksURI: String?
    /// The roles, by name, an account needs one of for this client's tokens; `nil`: any account.
    public var requiredRoles: [String]?
    /// The least class of sign-in (`phr`, `phrh`) its tokens are given for; `nil`: any.
    public var minimumACR: String?
    /// Its sessions' lifetimes in seconds, idle and absolute; `nil`: the deployment's.
    public var refreshTokenLifetime: Int?
    public var refreshTokenAbsoluteLifetime: Int?
    /// Seconds in which a refresh whose answer was lost may be sent again; `nil`: the deployment's.
    public var refreshTokenRetryWindow: Int?
    /// Whether it authenticates with `private_key_jwt`.
    public var usesKeys: Bool { jwks != nil || jwksURI != nil }
    public init(id: String, name: String, type: String, secretHash: [UInt8]?, grants: [String], scopes: [String], redirectURIs: [String],
                audiences: [String]?, createdAt: Int64, postLogoutRedirectURIs: [String] = [], backchannelLogoutURI: String? = nil, jwks: String? = nil,
                requirePushedRequests: Bool = false, jwksURI: String? = nil, requiredRoles: [String]? = nil, minimumACR: String? = nil,
                refreshTokenLifetime: Int? = nil, refreshTokenAbsoluteLifetime: Int? = nil, refreshTokenRetryWindow: Int? = nil) {
        self.refreshTokenRetryWindow = refreshTokenRetryWindow
        self.refreshTokenLifetime = refreshTokenLifetime
        self.refreshTokenAbsoluteLifetime = refreshTokenAbsoluteLifetime
        self.requiredRoles = requiredRoles
        self.minimumACR = minimumACR
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.requirePushedRequests = requirePushedRequests
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.backchannelLogoutURI = backchannelLogoutURI
        self.id = id
        self.name = name
        self.type = type
        self.secretHash = secretHash
        self.grants = grants
        self.scopes = scopes
        self.redirectURIs = redirectURIs
        self.audiences = audiences
        self.createdAt = createdAt
    }
}

/// Successful events of one kind on one UTC day (``Store/dailyEventCounts(from:to:kinds:)``).
public struct DailyEventCount: Sendable, Equatable {
    /// Days since 1970-01-01, UTC.
    public var day: Int64
    public var kind: String
    public var count: Int
    /// The first and last event's time (milliseconds).
    public var first: Int64
    public var last: Int64

    public init(day: Int64, kind: String, count: Int, first: Int64, last: Int64) {
        self.day = day
        self.kind = kind
        self.count = count
        self.first = first
        self.last = last
    }
}

/// A rate-limit counter's name: its bucket and the SHA-256 of what it counts for.
public struct RateCounterKey: Sendable, Equatable {
    public var bucket: String
    public var key: [UInt8]
    public init(bucket: String, key: [UInt8]) {
        self.bucket = bucket
        self.key = key
    }
}

/// A rate-limit counter as kept: the window it counts in (milliseconds) and its count.
public struct RateCount: Sendable, Equatable {
    public var counter: RateCounterKey
    public var windowStart: Int64
    public var count: Int
    public init(counter: RateCounterKey, windowStart: Int64, count: Int) {
        self.counter = counter
        self.windowStart = windowStart
        self.count = count
    }
}
