import SignetAPI

/// What a client may ask of the accounts it serves, enforced by the server rather than trusted to
/// the app: `required_roles` (an admin console for the accounts an operator gave one of its
/// roles) and `minimum_acr` (tokens only from a passkey sign-in, or a hardware-bound one's: RFC
/// 9470's classes, OpenID Connect EAP ACR Values §2). Checked at every grant that gives the client
/// tokens, before anything is used, and at `/authorize`.
extension Ceremonies {
    /// Refuses tokens for `client` to the account `userID` signed in with `amr` (RFC 8176): a
    /// sign-in below the client's `minimum_acr` is `unmet_authentication_requirements`, an account
    /// without one of its `required_roles` `role_required`. Nothing is read for a client with
    /// neither.
    func requireClientPolicy(userID: String, amr: [String], client: ClientConfiguration) throws {
        if let minimum = client.minimumACR, !AuthenticationContext.meets(AuthenticationContext.reached(amr: amr), anyOf: [minimum]) {
            throw AuthError(.unmetAuthenticationRequirements, "client \(client.id) takes only sign-ins of class \(minimum); this one (\(amr.joined(separator: " "))) is not",
                            publicDetail: minimum == AuthenticationContext.hardwareProtected
                                ? "This app needs a sign-in with a hardware-bound passkey." : "This app needs a sign-in with a passkey.")
        }
        try requireRole(userID: userID, client: client)
    }

    /// A refresh for a client whose policy the session no longer meets (a role taken away, a
    /// `minimum_acr` raised): refused before the token is used, and the session ends, as blocking
    /// ends it (a retry is `refresh_token_revoked`, not a reuse). A token that is not live is left
    /// to the rotation to answer for.
    func requireClientPolicy(refreshKey: [UInt8], client: ClientConfiguration) throws {
        guard client.requiredRoles != nil || client.minimumACR != nil,
              let live = try store.liveRefreshToken(hash: refreshKey, now: nowMillis), live.clientID == client.id else { return }
        do {
            try requireClientPolicy(userID: live.userID, amr: live.amr, client: client)
        } catch {
            _ = try store.revokeRefreshFamily(hash: refreshKey, now: nowMillis)
            throw error
        }
    }

    /// The classes an authorization request for `client` asks for: those it named, raised to the
    /// client's `minimum_acr` (a weaker one named is replaced by it), so that the sign-in page asks
    /// for a sign-in the client's tokens will be given for.
    static func effectiveACR(_ requested: [String]?, client: ClientConfiguration) -> [String]? {
        guard let minimum = client.minimumACR else { return requested }
        let strong = (requested ?? []).filter { AuthenticationContext.meets($0, anyOf: [minimum]) }
        return strong.isEmpty ? [minimum] : strong
    }

    /// A client with `required_roles` is for the accounts that have one of them, by name: any
    /// other is refused `role_required`. One read of the account's roles, only for such a client.
    func requireRole(userID: String, client: ClientConfiguration) throws {
        guard let required = client.requiredRoles else { return }
        guard try currentRoles(userID).contains(where: { required.contains($0.name) }) else {
            throw AuthError(.roleRequired, "client \(client.id) is for accounts with the role \(required.joined(separator: " or ").prefix(300))")
        }
    }

    /// Why `names` cannot be a client's `required_roles` (`nil`: they can): 1 to 20 names of
    /// roles, each as a role's name may be (1 to 256 characters), once each. A name no role has
    /// yet is allowed: the client then waits for the role, refusing everyone meanwhile.
    public static func requiredRolesProblem(_ names: [String]) -> String? {
        guard (1...20).contains(names.count) else { return "name 1 to 20 roles" }
        if let bad = names.first(where: { !(1...256).contains($0.count) || $0.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) }) {
            return "\"\(bad.prefix(40))\" is not a role's name (1 to 256 characters, no control characters)"
        }
        guard Set(names).count == names.count else { return "a role is named twice" }
        return nil
    }

    /// The seconds a client's own session lifetime may be: a minute to ten years. It takes effect
    /// only where shorter than the deployment's (``refreshLifetimes(_:)``).
    public static let refreshLifetimeRange = 60...(3650 * 86_400)
    /// The seconds a refresh whose answer was lost may be sent again in, the deployment's
    /// (`tokens.refresh_token_retry_window`) or a client's (Auth0's `refresh_token.leeway`).
    public static let refreshRetryWindowRange = 0...300

    /// Why `value` cannot be a client's `minimum_acr` (`nil`: it can): one of
    /// ``AuthenticationContext/supported``.
    public static func minimumACRProblem(_ value: String) -> String? {
        AuthenticationContext.supported.contains(value) ? nil : "minimum_acr must be \(AuthenticationContext.supported.joined(separator: " or "))"
    }
}
