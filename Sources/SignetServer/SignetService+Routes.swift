import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

extension SignetService {
    /// Every route's method and pattern, in the order they are matched (the service fuzz
    /// target sends requests to each, and its seeds name them).
    package static var routeList: [(method: String, pattern: String)] { routes().routes.map { ($0.method, $0.pattern) } }

    /// Every route of the JSON API, with what it needs.
    static func routes() -> Router<SignetService> {
        var r = Router<SignetService>()
        // Auth0 native passkeys and OAuth (DESIGN.md, "Passkeys", "OAuth / OIDC").
        r.add("POST", "/passkey/register", needs: Needs(rateLimit: .signUpPerIP)) { s, call in
            Wire.encode(try s.ceremonies.beginSignUp(PasskeyRegisterRequest(wire: s.body(call)), context: call.context))
        }
        // An operator's enrollment link, in an app: options for the link's account, redeemed at
        // the token endpoint as a sign-up is. Counted per address as sign-ups are.
        r.add("POST", "/passkey/enroll", needs: Needs(rateLimit: .signUpPerIP)) { s, call in
            let request = try PasskeyEnrollRequest(wire: s.body(call))
            return Wire.encode(try s.ceremonies.beginEnrollment(clientID: request.client_id, ticket: request.ticket))
        }
        // With a bearer token, a step-up: the options and session are that account's.
        r.add("POST", "/passkey/challenge", needs: Needs(token: .optional(.account))) { s, call in
            Wire.encode(try s.ceremonies.beginSignIn(PasskeyChallengeRequest(wire: s.body(call)), principal: call.principal, context: call.context))
        }
        r.add("POST", "/oauth/token", needs: .tokenEndpoint) { s, call in
            let body = try s.body(call, form: true)
            let context = try s.clientContext(call, body)
            if body["grant_type"]?.string == GrantNames.clientCredentials { return try s.clientCredentials(body, context: context) }
            if body["grant_type"]?.string == GrantNames.authorizationCode {
                return .json(200, try s.ceremonies.authorizationCodeGrant(
                    clientID: body.optionalMember("client_id"), secret: body.optionalMember("client_secret"), code: body.optionalMember("code"),
                    redirectURI: body.optionalMember("redirect_uri"), verifier: body.optionalMember("code_verifier"), audience: body.requestedAudience(),
                    context: context).wireBytes)
            }
            let request = try TokenRequest(wire: body, clientID: context.basic?.id ?? context.assertionIssuer)
            let tokens: TokenResponse
            switch request.grant_type {
            case GrantNames.webauthn: tokens = try s.ceremonies.passkeyGrant(request, context: context)
            case GrantNames.refreshToken: tokens = try s.ceremonies.refreshGrant(request, context: context)
            case GrantNames.passwordlessOTP: tokens = try s.ceremonies.otpGrant(request, context: context)
            case GrantNames.recoveryCode: tokens = try s.ceremonies.recoveryCodeGrant(request, context: context)
            case GrantNames.deviceCode: tokens = try s.ceremonies.deviceCodeGrant(request, deviceCode: try body.optionalMember("device_code"), context: context)
            default: throw AuthError(.unsupportedGrantType, "grant_type \"\(request.grant_type.prefix(100))\"")
            }
            return .json(200, tokens.wireBytes)
        }
        // Email codes (Auth0 passwordless): counted per client address by the route.
        r.add("POST", "/passwordless/start", needs: Needs(clientCredentials: true, rateLimit: .passwordlessPerIP)) { s, call in
            let body = try s.body(call)
            return try Wire.encode(s.ceremonies.passwordlessStart(PasswordlessStartRequest(wire: body), context: s.clientContext(call, body)))
        }
        // A new device's sign-in, approved by an old one (RFC 8628).
        r.add("POST", "/oauth/device/code", needs: .tokenEndpoint) { s, call in
            let body = try s.body(call, form: true)
            let context = try s.clientContext(call, body)
            return try Wire.encode(s.ceremonies.startDeviceSignIn(
                clientID: body.optionalMember("client_id"), secret: body.optionalMember("client_secret"), scope: body.optionalMember("scope"),
                userAgent: call.request.header("user-agent"), context: context))
        }
        r.add("POST", "/oauth/revoke", needs: .tokenEndpoint) { s, call in
            let body = try s.body(call, form: true)
            try s.ceremonies.revoke(RevokeRequest(wire: body), secret: body.optionalMember("client_secret"), context: s.clientContext(call, body))
            return .json(200, Array("{}".utf8))
        }
        // For resource servers (RFC 7662): whether a token is active now; client authentication
        // as at the token endpoint, public clients refused.
        r.add("POST", "/oauth/introspect", needs: .tokenEndpoint) { s, call in
            let body = try s.body(call, form: true)
            let context = try s.clientContext(call, body)
            return try Wire.encode(s.ceremonies.introspect(
                token: body.optionalMember("token"), clientID: body.optionalMember("client_id"), secret: body.optionalMember("client_secret"),
                context: context))
        }
        // OIDC Core §5.3.1: the UserInfo endpoint takes GET and POST alike (the token in the
        // Authorization header either way).
        for method in ["GET", "POST"] {
            r.add(method, "/userinfo", needs: Needs(token: .required(.anyWithScope("openid")))) { s, call in
                let info = s.ceremonies.userInfo(call.account)
                // The operators' claims (roles, app_metadata), as the tokens carry them (OIDC Core §5.3.2: other claims may follow).
                let extra = try s.ceremonies.operatorClaims(userID: info.sub)
                guard !extra.isEmpty, var object = try Wire.value(info).object else { return try Wire.encode(info) }
                for (name, value) in extra { object[name] = value }
                return .json(200, Array(JSONValue.object(object).serialized.utf8))
            }
        }
        // The signed-in account.
        r.add("GET", "/me/export", needs: .recentSignIn) { s, call in try s.exportAnswer(s.ceremonies.accountExport(call.account, context: call.context)) }
        r.add("GET", "/me/passkeys", needs: .account) { s, call in try Wire.encode(s.ceremonies.passkeys(call.account)) }
        r.add("POST", "/me/passkeys/options", needs: .addsCredential) { s, call in
            // `{"conditional": true}`: for a registration made without a sheet (an app's automatic
            // upgrade, as the account page's offer), which may come without user presence.
            let conditional = call.request.body.isEmpty ? false : try s.body(call)["conditional"] == .bool(true)
            return Wire.encode(try s.ceremonies.beginAddPasskey(call.account, conditional: conditional))
        }
        r.add("POST", "/me/passkeys", needs: .finishesPasskey) { s, call in
            try Wire.encode(s.ceremonies.addPasskey(AddPasskeyRequest(wire: s.body(call)), principal: call.account, context: call.context,
                                                     userAgent: call.request.header("user-agent"), app: call.account.clientID), status: 201)
        }
        r.add("PATCH", "/me/passkeys/{id}", needs: .sensitive) { s, call in
            try Wire.encode(s.ceremonies.renamePasskey(id: call.parameter("id"), RenameRequest(wire: s.body(call)), principal: call.account))
        }
        r.add("DELETE", "/me/passkeys/{id}", needs: .sensitive) { s, call in
            try s.ceremonies.revokePasskey(id: call.parameter("id"), principal: call.account, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("POST", "/me/device-keys", needs: .addsCredential) { s, call in
            try Wire.encode(s.ceremonies.enrollDeviceKey(EnrollDeviceKeyRequest(wire: s.body(call)), principal: call.account, context: call.context), status: 201)
        }
        // Recovery codes and the recovery hold.
        r.add("POST", "/me/recovery-codes", needs: .sensitive) { s, call in
            try Wire.encode(s.ceremonies.createRecoveryCodes(call.account, context: call.context), status: 201)
        }
        r.add("GET", "/me/recovery-codes", needs: .account) { s, call in try Wire.encode(s.ceremonies.recoveryCodesStatus(call.account)) }
        r.add("GET", "/me/recovery", needs: .account) { s, call in try Wire.encode(s.ceremonies.recovery(call.account)) }
        r.add("DELETE", "/me/recovery", needs: .account) { s, call in
            try s.ceremonies.cancelRecovery(call.account, context: call.context)
            return HTTPResponse(status: 204)
        }
        // Where the account is signed in; ending one is a sensitive change.
        r.add("GET", "/me/sessions", needs: .account) { s, call in try Wire.encode(s.ceremonies.sessionList(call.account)) }
        r.add("GET", "/me/roles", needs: .account) { s, call in
            try Wire.encode(AccountRoles(roles: s.ceremonies.accountRoles(call.account).map { r in
                AccountRoles.Role(id: r.role.id, name: r.role.name, description: r.role.description, expires_at: r.role.expiresAt.map(Ceremonies.iso),
                                  permissions: r.permissions.map { ManagementPermission($0, s.configuration) })
            }))
        }
        // Sign-in by email code, on or off (turning it either way is a fresh passkey check's).
        r.add("GET", "/me/email-sign-in", needs: .account) { s, call in try Wire.encode(s.ceremonies.emailSignIn(call.account)) }
        r.add("PUT", "/me/email-sign-in", needs: .sensitive) { s, call in
            try Wire.encode(s.ceremonies.setEmailSignIn(EmailSignIn(wire: s.body(call)), principal: call.account, context: call.context))
        }
        r.add("DELETE", "/me/sessions", needs: .sensitive) { s, call in
            try Wire.encode(SessionsEnded(ended: s.ceremonies.revokeOtherSessions(call.account, context: call.context)))
        }
        r.add("DELETE", "/me/sessions/{id}", needs: .sensitive) { s, call in
            try s.ceremonies.revokeSession(id: call.parameter("id"), principal: call.account, context: call.context)
            return HTTPResponse(status: 204)
        }
        // The account's display name.
        r.add("PATCH", "/me", needs: .account) { s, call in
            let body = try s.body(call)
            guard body.object?["name"] != nil else { throw AuthError.malformed("missing member \"name\"") }
            return try Wire.encode(s.ceremonies.rename(call.account, name: body.optionalMember("name"), context: call.context))
        }
        // Auth0-style metadata: the owner's user_metadata, and the operators' app_metadata to read.
        r.add("GET", "/me/metadata", needs: .account) { s, call in try Wire.encode(s.ceremonies.accountMetadata(call.account)) }
        r.add("PATCH", "/me/metadata", needs: .account) { s, call in
            let body = try s.body(call)
            guard let object = body.object, object.keys.allSatisfy({ $0 == "user_metadata" }), let patch = try JSONDocument.metadata(body, "user_metadata") else {
                throw AuthError.malformed("send {\"user_metadata\": {…}}: app_metadata is set by operators")
            }
            return try Wire.encode(s.ceremonies.updateUserMetadata(call.account, patch))
        }
        // A new address: a code to it after a fresh passkey check, then that code.
        r.add("POST", "/me/email", needs: .sensitive) { s, call in
            try Wire.encode(s.ceremonies.startEmailChange(call.account, email: s.body(call).member("email"), context: call.context), status: 202)
        }
        r.add("POST", "/me/email/verify", needs: .account) { s, call in
            let body = try s.body(call)
            return try Wire.encode(s.ceremonies.finishEmailChange(call.account, email: body.member("email"), code: body.member("code"), context: call.context))
        }
        // The owner erases the account (GDPR Art. 17), after a fresh passkey check.
        r.add("DELETE", "/me", needs: .sensitive) { s, call in
            try s.ceremonies.deleteAccount(call.account, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/me/events", needs: .account) { s, call in
            let take = try Self.integer(call.request.query["take"], "take", default: 20)
            guard (1...100).contains(take) else { throw AuthError.malformed("take must be 1 to 100") }
            // `before`: an event's `id`, for the page of older ones.
            let before = try Self.eventID(call.request.query["before"], "before")
            return try Wire.encode(AccountEventList(events: s.ceremonies.ownHistory(call.account, take: take, before: before)))
        }
        r.add("GET", "/me/device-keys", needs: .account) { s, call in try Wire.encode(s.ceremonies.deviceKeys(call.account)) }
        r.add("DELETE", "/me/device-keys/{id}", needs: .sensitive) { s, call in
            try s.ceremonies.revokeDeviceKey(id: call.parameter("id"), principal: call.account, context: call.context)
            return HTTPResponse(status: 204)
        }
        // High-risk actions.
        r.add("POST", "/actions/challenge", needs: .account) { s, call in
            let body = try s.body(call)
            // The action stays a strict JSON value: its hash is over its RFC 8785 form.
            return Wire.encode(try s.ceremonies.beginAction(
                deviceKeyID: body.optionalMember("device_key_id"), method: body.optionalMember("method"), action: body["action"],
                principal: call.account, context: call.context))
        }
        r.add("POST", "/actions/approve", needs: .account) { s, call in
            Wire.encode(try s.ceremonies.approveAction(ActionApproveRequest(wire: s.body(call)), principal: call.account, context: call.context))
        }
        // For resource servers: a confidential client's credentials, and the account it acts for.
        r.add("POST", "/actions/verify", needs: .resourceServer) { s, call in
            let body = try s.body(call)
            return try Wire.encode(s.ceremonies.verifyActionToken(
                body.member("action_token"), action: body["action"], subject: body.member("sub"), client: call.authenticatedClient, context: call.context))
        }
        addManagementRoutes(&r)
        addManagementClientRoutes(&r)
        addManagementLogStreamRoutes(&r)
        addManagementRoleRoutes(&r)
        addManagementResourceServerRoutes(&r)
        addSCIMRoutes(&r)
        // The web: the authorization code flow and the hosted pages.
        addAuthorizeRoutes(&r)
        addSignInRoutes(&r)
        addAccountRoutes(&r)
        addDeviceRoutes(&r)
        // Discovery, keys, association files, operations.
        r.add("GET", "/.well-known/openid-configuration") { s, _ in .json(200, s.discovery) }
        // RFC 8414 §3: where an OAuth client (one that is not OpenID Connect) looks for the same
        // metadata.
        r.add("GET", "/.well-known/oauth-authorization-server") { s, _ in .json(200, s.discovery) }
        r.add("GET", "/.well-known/jwks.json") { s, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=\(KeyRing.jwksMaxAge)")], body: s.keys.jwks.serializedBytes)
        }
        r.add("GET", "/.well-known/apple-app-site-association") { s, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: s.appleAssociation)
        }
        r.add("GET", "/.well-known/assetlinks.json") { s, _ in HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: s.androidAssociation) }
        r.add("GET", "/.well-known/passkey-endpoints") { s, _ in HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: s.passkeyEndpoints) }
        r.add("GET", "/healthz") { s, _ in
            guard s.ceremonies.healthy() else {
                return .json(503, Array(#"{"database":"unavailable","reason":"database_unavailable","status":"unavailable"}"#.utf8))
            }
            // Re-keyed while this server ran: what it would seal or hash now, no restarted server could read.
            guard s.ceremonies.keys.keyFailure == nil else {
                return .json(503, Array(#"{"database":"ok","keys":"unavailable","reason":"signing_key_unavailable","status":"unavailable"}"#.utf8))
            }
            return .json(200, Array(#"{"database":"ok","status":"ok"}"#.utf8))
        }
        r.add("GET", "/metrics") { s, _ in
            // With metrics.listen, only that listener answers.
            guard s.configuration.metricsListen == nil else { throw AuthError(.notFound, "metrics are on metrics.listen") }
            return s.metricsResponse
        }
        return r
    }
}
