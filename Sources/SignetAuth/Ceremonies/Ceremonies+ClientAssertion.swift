import SignetAPI
import SignetCrypto
import SignetWebAuthn

extension Ceremonies {
    /// The client of a request that authenticates with `private_key_jwt` (OIDC Core §9, RFC 7523
    /// §3): named by `client_id` or, without one, by the assertion's `iss` (RFC 7521 §4.2); a
    /// client with registered keys; an assertion that verifies with one of them
    /// (``ClientAssertion/verify(_:clientID:keys:audiences:now:)``), for Signet's issuer, its token
    /// endpoint or the endpoint it was sent to; and a `jti` this client never used before,
    /// recorded by the database until the assertion expires, so two instances given the same
    /// assertion at once accept it once (RFC 7523 §3, item 7). A failure is audited as a secret's
    /// is (`client_authentication`).
    func assertedClient(_ assertion: ClientAssertion, clientID: String?, grant: String?, context: RequestContext) throws -> ClientConfiguration {
        guard let jwt = assertion.jwt, !jwt.isEmpty else { throw AuthError.malformed("client_assertion_type without client_assertion") }
        guard let id = clientID ?? context.assertionIssuer else {
            throw AuthError(.clientAssertionInvalid, "client_assertion names no client (no client_id, and no iss it can be read from)")
        }
        let client = try self.client(id, grant: grant)
        do {
            guard let type = assertion.type, type.isExactly(ClientAssertion.jwtBearer) else {
                throw AuthError(.clientAssertionInvalid, "client_assertion_type \(assertion.type?.prefix(80) ?? "absent") is not \(ClientAssertion.jwtBearer)")
            }
            guard client.usesKeys else {
                throw AuthError(.clientAssertionInvalid, "client \(id) has no registered keys; it authenticates with \(client.authenticationMethod)")
            }
            let now = nowMillis / 1000
            func verify(refresh: Bool) throws -> ClientAssertion.Verified {
                var keys = client.jwks
                if let uri = client.jwksURI {
                    do {
                        keys = try clientKeys.keys(clientID: client.id, uri: uri, refresh: refresh)
                    } catch {
                        throw AuthError(.clientAssertionInvalid, "client \(id)'s keys at its jwks_uri: \(error.detail)")
                    }
                }
                do {
                    return try ClientAssertion.verify(jwt, clientID: client.id, keys: keys, audiences: assertionAudiences(assertion.endpoint), now: now)
                } catch {
                    // A published set may have gained the key since it was fetched: once more, fetched anew.
                    if error.keyMismatch, client.jwksURI != nil, !refresh { return try verify(refresh: true) }
                    throw AuthError(.clientAssertionInvalid, "client_assertion of client \(id): \(error.detail)")
                }
            }
            let verified = try verify(refresh: false)
            do {
                try store.perform([assertionMark(client: client.id, verified)])
            } catch {
                guard error.code == .proofUsed else { throw error }
                throw AuthError(.clientAssertionReplayed, "client \(id) used this client_assertion's jti before")
            }
            return client
        } catch var failure as AuthError {
            audit(.clientAuthentication, refused: failure, client: id, context: context)
            failure.audited = true
            throw failure
        }
    }

    /// A resource server's authentication by the assertion of `context` (``RequestContext/assertion``),
    /// as at the token endpoint; `clientID`, if given, must be the assertion's client.
    public func authenticateClient(assertedIn context: RequestContext, clientID: String?) throws -> ClientConfiguration {
        guard let assertion = context.assertion else { throw AuthError.malformed("no client_assertion") }
        return try assertedClient(assertion, clientID: clientID, grant: nil, context: context)
    }

    /// What an assertion may name as its `aud`: the issuer, the token endpoint (OIDC Core §9),
    /// and the URL it was sent to.
    func assertionAudiences(_ endpoint: String) -> [String] {
        [configuration.issuer, configuration.issuer + "/oauth/token", endpoint]
    }

    /// The mark that makes an assertion single use: by client and `jti` (the client's ID
    /// preceded by its length, so that no two pairs hash the same input), kept a minute past the
    /// assertion's `exp` (what the verification allows a client's clock).
    func assertionMark(client: String, _ verified: ClientAssertion.Verified) -> StoreWrite {
        .useProof(id: Self.usedMarkID(seconds: verified.exp, "client-assertion \(client.utf8.count) \(client) \(verified.jti)"),
                  expiresAt: (verified.exp + ClientAssertion.leeway + 1) * 1000)
    }
}
