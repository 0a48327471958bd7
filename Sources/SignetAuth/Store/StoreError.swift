/// A failure of the store, with a stable code.
public struct StoreError: Error, Hashable, CustomStringConvertible, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A uniqueness rule not covered by a code below was broken; nothing was written.
        public static let conflict = Code(rawValue: "conflict")
        /// The auth session (or other single-use mark) was already used; nothing was written.
        public static let sessionUsed = Code(rawValue: "session_used")
        /// An account with this email exists; nothing was written.
        public static let emailTaken = Code(rawValue: "email_taken")
        /// A passkey with this credential ID exists; nothing was written.
        public static let credentialTaken = Code(rawValue: "credential_taken")
        /// The account has its most live passkeys; nothing was written.
        public static let passkeyLimit = Code(rawValue: "passkey_limit")
        /// The account has its most live device keys; nothing was written.
        public static let deviceKeyLimit = Code(rawValue: "device_key_limit")
        /// As many signing keys as allowed are held (retired ones until deleted); nothing was written.
        public static let signingKeyLimit = Code(rawValue: "signing_key_limit")
        /// The account made its most action challenges in the window; nothing was written.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// The DPoP proof was used before; nothing was written.
        public static let proofUsed = Code(rawValue: "proof_used")
        /// The account is blocked; nothing was written.
        public static let userBlocked = Code(rawValue: "user_blocked")
        /// The database cannot be reached or is busy past its timeout.
        public static let unavailable = Code(rawValue: "database_unavailable")
        /// The disk (or the database's size limit) is full; the transaction was rolled back.
        public static let storageFull = Code(rawValue: "storage_full")
        /// The database was migrated by a newer Signet than this one (its schema has versions
        /// this build does not know); nothing was written.
        public static let schemaNewer = Code(rawValue: "schema_newer")
        /// Anything else: a bug or a corrupt database.
        public static let internalError = Code(rawValue: "internal")
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
    /// Equal by code: the detail is for logs, never for comparing.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
