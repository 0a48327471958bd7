public import SignetAPI

/// Who makes accounts. By default people make their own (a passkey, or an email code with
/// `passwordless.signup`); with `signup: false` only operators do, and their owners sign in by
/// email code and add a passkey.
extension Ceremonies {
    /// Refuses an account made by its owner where only operators make them (`signup: false`),
    /// before the request's address is read, so the answer tells nothing about it.
    func requireSignUpOpen() throws(AuthError) {
        guard configuration.signUp else { throw AuthError(.signupDisabled, "sign-up is closed (signup: false)") }
    }

    /// Refuses a passkey sign-up for `email` (normalized) where sign-up is for some domains only
    /// (`signup_domains`): 403 `signup_domain_not_allowed` for an address at another domain, and
    /// 403 `signup_code_required` for one at them, whose account starts with an email code,
    /// which proves the address is its owner's. What either says is the deployment's policy,
    /// not whether the address has an account.
    public func requirePasskeySignUp(email: String) throws(AuthError) {
        guard !configuration.signUpDomains.isEmpty else { return }
        guard configuration.signUpDomainAllows(email) else {
            throw AuthError(.signupDomainNotAllowed, "\(email.split(separator: "@").last ?? "") is not in signup_domains")
        }
        throw AuthError(.signupCodeRequired, "with signup_domains, an account starts with an email code")
    }

    /// `POST /api/v2/users` (Auth0's create user) and `signet admin users add`: an account for
    /// an address, no credential yet, and unless `verify_email` is false a message telling the
    /// address so (``Notice/accountCreated``) in the same transaction. Its owner gets in with an
    /// email code, or, where mail cannot go, by an enrollment link
    /// (``createEnrollmentLink(userID:lifetime:by:context:)``). An address with an account is 409
    /// `user_exists`, also when another call takes it meanwhile (the database's unique address).
    public func createUser(_ new: ManagementNewUser, by caller: ManagementCaller, context: RequestContext) throws -> ManagementUser {
        try makeAccount(new, createdAt: nil, by: caller, context: context)
    }

    /// The account of `new`, made now, or with `createdAt` one imported from an export that was
    /// made then (its audit row says so).
    /// An import's `carried` identity sets the account's ID and user handle and adds its
    /// passkeys in the same transaction (``importUser(_:createdAt:blocked:carrying:by:context:)``).
    func makeAccount(_ new: ManagementNewUser, createdAt: Int64?, blocked: Bool = false, carried: CarriedIdentity? = nil, by caller: ManagementCaller,
                     context: RequestContext) throws -> ManagementUser {
        let (email, name, language) = try Self.checked(new)
        let app = try new.app_metadata.map { try Self.mergedMetadata(nil, $0, member: "app_metadata") } ?? nil
        let own = try new.user_metadata.map { try Self.mergedMetadata(nil, $0, member: "user_metadata") } ?? nil
        let id = carried?.userID ?? newUserID()
        let user = UserRecord(id: id, handle: carried?.handle ?? random(32), email: email, name: name, emailVerified: new.email_verified ?? false,
                              createdAt: createdAt ?? nowMillis, locale: language, blocked: blocked)
        let told = (new.verify_email ?? true) && !blocked && configuration.email.canSend
        let detail = (createdAt == nil ? "" : blocked ? "imported blocked; " : "imported; ") + (carried?.auditNote ?? "") + (told ? "the address told" : "nothing mailed")
        let event = pendingAuditEvent(.adminUserCreated, user: user.id, client: caller.clientID, detail: detail, context: context)
        // An import keeps every passkey it carries (no limit): the operator's copy of an account.
        let keys: [StoreWrite] = (carried?.passkeys ?? []).map { row in var row = row; row.userID = id; return StoreWrite.addCredential(row, limit: nil) }
        let deviceKeys: [StoreWrite] = (carried?.deviceKeys ?? []).map { row in var row = row; row.userID = id; return StoreWrite.importDeviceKey(row) }
        let roles: [StoreWrite] = (carried?.roles ?? []).map { StoreWrite.giveRole(userID: id, roleID: $0.role.id, expiresAt: $0.expiresAt, at: nowMillis) }
        let passkeys = keys + deviceKeys + roles
        try store.perform([.createAccount(user), .audit(event)] + passkeys + (app != nil || own != nil ? [.userMetadata(userID: user.id, app: app, user: own)] : [])
                          + (told ? notice(.accountCreated, to: user) : []))
        counted(event)
        return try managedUser(id: user.id)
    }

    /// A new account's address (normalized as every address is), display name and the language
    /// of its messages (``Notice/languages``), or 400 `malformed`.
    package static func checked(_ new: ManagementNewUser) throws -> (email: String, name: String?, language: String) {
        let email = try emailAddress(new.email, member: "email")
        let name = try displayName(new.name, member: "name", limit: 256)
        if let connection = new.connection, connection.isEmpty || connection.utf8.count > 128 { throw AuthError.malformed("connection must be 1 to 128 bytes") }
        let language = try new.locale.map { tag in
            guard (2...35).contains(tag.utf8.count), tag.utf8.allSatisfy(isLanguageTagByte) else {
                throw AuthError.malformed("locale must be a language tag such as es or es-MX")
            }
            return Notice.language(acceptLanguage: String(decoding: tag.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self))
        } ?? "en"
        return (email, name, language)
    }

    /// A BCP 47 tag's bytes (RFC 5646 §2.1: letters, digits, hyphens), and `_` as in `es_MX`.
    static func isLanguageTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
