public import SignetAPI
import SignetWebAuthn

extension Ceremonies {
    /// Token introspection (RFC 7662 §2): whether an access or refresh token is active now, and
    /// what it says, for a confidential client (§2.1: the endpoint needs the caller's credentials,
    /// so that it cannot be used to scan for tokens).
    ///
    /// Active means everything Signet's own endpoints check: a valid signature and lifetime, an
    /// account that exists and is not blocked, a session not ended and a credential not revoked
    /// (and, for a refresh token, one not yet rotated). A resource server that verifies JWTs
    /// itself sees none of these ends until the token expires; one that asks here sees them at once.
    ///
    /// A caller sees an access token issued to it or for one of its audiences (RFC 8707: its own
    /// `audiences`, else the deployment's), and a refresh token issued to it. Any other token,
    /// and every token that is not active, gets `active: false` alone (§2.2, §4). The kind of
    /// token is told by its form, so `token_type_hint` is not needed (§2.1 lets the server look
    /// further than the hint).
    public func introspect(token: String?, clientID: String?, secret: String?, context: RequestContext) throws -> TokenIntrospection {
        guard clientID != nil || context.basic != nil || context.assertion != nil else {
            var error = AuthError(.clientSecretInvalid, "no client credentials", publicDetail: "token introspection requires client authentication")
            error.challenges = [#"Basic realm="signet""#]
            throw error
        }
        let caller = try tokenEndpointClient(clientID: clientID, secret: secret, context: context)
        guard caller.isConfidential else {
            let failure = AuthError(.clientSecretInvalid, "client \(caller.id) is public; introspection needs a confidential client",
                                    publicDetail: "token introspection requires client authentication")
            audit(.clientAuthentication, refused: failure, client: caller.id, context: context)
            throw failure
        }
        guard let token, !token.isEmpty else { throw AuthError.malformed("token is required") }
        // Longer than any token Signet issues: not one of them, and not worth parsing.
        guard token.utf8.count <= 4096 else { return .inactive }
        let answer = token.utf8.contains(UInt8(ascii: ".")) ? try introspectAccessToken(token, caller: caller) : try introspectRefreshToken(token, caller: caller)
        return answer ?? .inactive
    }

    /// An access token's claims while it is active and `caller` may see it; `nil` otherwise.
    func introspectAccessToken(_ token: String, caller: ClientConfiguration) throws -> TokenIntrospection? {
        guard let claims = try? JWT.verify(token, type: "at+jwt", issuer: configuration.issuer, keys: keys, now: clock()) else { return nil }
        let audiences = claims["aud"]?.string.map { [$0] } ?? claims["aud"]?.array?.compactMap(\.string) ?? []
        let issuedTo = claims["client_id"]?.string
        let callerAudiences = caller.audiences ?? configuration.audiences
        guard issuedTo == caller.id || audiences.contains(where: callerAudiences.containsExactly) else { return nil }
        if claims["gty"]?.string == "client-credentials" {
            // A machine's token stands while its client does and may still use the grant.
            guard let issuedTo, let client = clients.client(issuedTo), client.grants.contains(GrantNames.clientCredentials) else { return nil }
        } else {
            guard let sub = claims["sub"]?.string,
                  let (user, ended) = try tokenHolder(sub: sub, sid: claims["sid"]?.string, credential: claims["cred"]?.string, client: issuedTo),
                  !user.blocked, ended == nil
            else { return nil }
        }
        let jkt = claims["cnf"]?["jkt"]?.string
        return TokenIntrospection(
            active: true, scope: claims["scope"]?.string, client_id: issuedTo, token_type: jkt == nil ? "Bearer" : "DPoP",
            exp: claims["exp"]?.int64, iat: claims["iat"]?.int64, sub: claims["sub"]?.string, aud: audiences, iss: configuration.issuer,
            jti: claims["jti"]?.string, auth_time: claims["auth_time"]?.int64, acr: claims["acr"]?.string,
            amr: claims["amr"]?.array?.compactMap(\.string),
            sid: claims["sid"]?.string, cnf: jkt.map(TokenIntrospection.Confirmation.init),
            permissions: claims["permissions"]?.array?.compactMap(\.string))
    }

    /// A refresh token's state while it is live and was issued to `caller`; `nil` otherwise.
    func introspectRefreshToken(_ token: String, caller: ClientConfiguration) throws -> TokenIntrospection? {
        guard let key = Base64URL.decode(token).flatMap(RefreshToken.key), let row = try store.liveRefreshToken(hash: key, now: nowMillis),
              row.clientID == caller.id,
              let (user, ended) = try tokenHolder(sub: row.userID, sid: row.family, credential: row.credential, client: row.clientID),
              !user.blocked, ended == nil
        else { return nil }
        return TokenIntrospection(
            active: true, scope: row.scope, client_id: row.clientID, exp: row.expiresAt / 1000, iat: row.createdAt / 1000, sub: row.userID,
            iss: configuration.issuer, auth_time: row.authTime, acr: AuthenticationContext.reached(amr: row.amr), amr: row.amr, sid: row.family, cnf: row.jkt.map(TokenIntrospection.Confirmation.init))
    }
}
