import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// What the pushed authorization request endpoint answers (RFC 9126 §2.2).
public struct PushedAuthorization: Sendable, Equatable {
    public let requestURI: String
    public let expiresIn: Int
}

/// Pushed authorization requests (RFC 9126): a client posts its authorization request to
/// `/oauth/par`, authenticated as at the token endpoint, and sends the browser to `/authorize`
/// with `client_id` and the `request_uri` it got back. The request's parameters never travel in
/// the browser's address bar, nobody can change them on the way, and a confidential client has
/// proved who it is before the user sees a page.
extension Ceremonies {
    /// How long a `request_uri` may be used, in seconds.
    public static let pushedRequestLifetime = 60
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"
    static let pushedAAD = Array("signet/par/v1".utf8)

    /// `POST /oauth/par` (RFC 9126 §2): the client authenticates as at the token endpoint (a
    /// public one names itself), the parameters are checked as `/authorize` checks them (no
    /// `request_uri` among them, §2.1; a `client_id`, if given, the authenticated client's), and
    /// the answer is a `request_uri` for that client alone. A `DPoP` header's proof binds the code
    /// to its key (RFC 9449 §10.1). The request is sealed into the URI
    /// (AES-256-GCM under a key derived from the key-encryption key, with its own associated
    /// data), so any instance can open it and nothing is stored. Within its minute it can be
    /// opened again, as §4 allows for a user who reloads the page: what it carries (a PKCE
    /// challenge, the client's redirect URI) is of use to nobody else.
    public func pushAuthorization(_ parameters: [String: String], repeated: [String] = [], context: RequestContext) throws -> PushedAuthorization {
        do {
            let pushed = try push(parameters, repeated: repeated, context: context)
            metrics.ceremony("pushed_authorization", reason: nil)
            return pushed
        } catch {
            metrics.ceremony("pushed_authorization", reason: AuthError(error).reason.rawValue)
            throw error
        }
    }

    func push(_ parameters: [String: String], repeated: [String], context: RequestContext) throws -> PushedAuthorization {
        if let name = repeated.first { throw AuthError.malformed("\(name.prefix(40)) appears more than once (RFC 6749 §3.1)") }
        let secret = parameters["client_secret"]
        let client = try tokenEndpointClient(clientID: parameters["client_id"], secret: secret, grant: GrantNames.authorizationCode, context: context)
        var query = parameters
        for name in ["client_secret", "client_assertion", "client_assertion_type"] { query[name] = nil }
        if let named = query["client_id"], !named.isExactly(client.id) { throw AuthError.malformed("client_id differs from the authenticated client") }
        query["client_id"] = client.id
        var request: AuthorizationRequest
        do {
            request = try authorizationRequest(query, repeated: repeated, pushed: true)
        } catch let refusal as AuthorizationRedirectError {
            throw refusal.error
        }
        // RFC 9449 §10.1: a DPoP proof on the push binds the code to its key, as dpop_jkt does
        // (and must name the same key when both are sent). The proof is used up here.
        if context.dpop != nil, let proof = try tokenBinding(client, context: context, path: "/oauth/par") {
            if let named = request.dpopJKT, !named.isExactly(proof.jkt) {
                throw AuthError(.dpopKeyMismatch, "dpop_jkt names another key than the DPoP proof's")
            }
            try store.perform(proofMark(proof))
            request.dpopJKT = proof.jkt
        }
        request.expiresAt = nowMillis + Int64(Self.pushedRequestLifetime) * 1000
        let plain = try JSONEncoder().encode(request)
        let sealed = Base64URL.encode(try AESGCM.seal(Array(plain), key: authorizeKey, aad: Self.pushedAAD))
        return PushedAuthorization(requestURI: Self.requestURIPrefix + sealed, expiresIn: Self.pushedRequestLifetime)
    }

    /// The request a `request_uri` stands for (RFC 9126 §4), for the client that pushed it
    /// (`client_id` must be present and the same), if it has not expired. It is checked again
    /// as any request is (§4): its client must still exist, still use this flow, and still have
    /// its redirect URI. Anything else is `request_uri_invalid`, shown on the error page: a
    /// request that cannot be opened names no redirect URI to trust. The parameters of the query
    /// other than these two are not used.
    func pushedRequest(_ uri: String, clientID: String?) throws -> AuthorizationRequest {
        guard let clientID, !clientID.isEmpty else { throw AuthError.malformed("client_id is required with request_uri") }
        guard uri.utf8.count <= 8192, uri.hasPrefix(Self.requestURIPrefix), let sealed = Base64URL.decode(uri.dropFirst(Self.requestURIPrefix.count)),
              let plain = try? AESGCM.open(sealed, key: authorizeKey, aad: Self.pushedAAD),
              var request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(plain))
        else { throw AuthError(.requestURIInvalid, "request_uri is not one this server gave out") }
        guard request.expiresAt > nowMillis else { throw AuthError(.requestURIInvalid, "request_uri expired") }
        guard request.clientID.isExactly(clientID) else { throw AuthError(.requestURIInvalid, "request_uri was pushed by another client") }
        guard let client = clients.client(clientID) else { throw AuthError(.clientUnknown, "unknown client_id \"\(clientID.prefix(64))\"") }
        guard client.grants.contains(GrantNames.authorizationCode), Self.redirectAllowed(request.redirectURI, for: client) else {
            throw AuthError(.requestURIInvalid, "client \(client.id) no longer uses this flow or this redirect URI")
        }
        // From here on it is carried through the sign-in page like any request.
        request.expiresAt = nowMillis + Int64(configuration.sessionTimeout) * 2000
        return request
    }
}
