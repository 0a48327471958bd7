import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// A client added by an administrator, with its secret: shown this once, kept only as a hash.
public struct AddedClient: Sendable {
    public let client: ClientRow
    public let secret: String?
}

/// Clients kept in the database (DESIGN.md, "Management API and operations": `signet admin
/// clients`). A running server sees a change within ``ClientDirectory``'s refresh interval.
extension Ceremonies {
    /// Adds a client. A confidential client gets a new 32-byte secret; `client_credentials` is
    /// for confidential clients only, and `scopes` for them alone.
    public func addClient(name: String, type: String, grants: [String], scopes: [String], redirectURIs: [String], audiences: [String]?,
                          postLogoutRedirectURIs: [String] = [], backchannelLogoutURI: String? = nil, jwks: String? = nil, requirePushedRequests: Bool = false,
                          by caller: ManagementCaller, context: RequestContext) throws -> AddedClient {
        guard type == "confidential" || type == "public" else { throw AuthError.malformed("--type must be confidential or public") }
        let keys = try jwks.map(Self.keySet)?.text
        if keys != nil, type != "confidential" { throw AuthError.malformed("--jwks is for a confidential client (private_key_jwt)") }
        guard !name.isEmpty, name.count <= 100 else { throw AuthError.malformed("--name must be 1 to 100 characters") }
        guard !grants.isEmpty else { throw AuthError.malformed("give at least one --grant (\(GrantNames.known.joined(separator: ", ")))") }
        if let unknown = grants.first(where: { !GrantNames.known.contains($0) }) {
            throw AuthError.malformed("unknown grant \"\(unknown)\" (known: \(GrantNames.known.joined(separator: ", ")))")
        }
        if grants.contains(GrantNames.clientCredentials), type != "confidential" {
            throw AuthError.malformed("client_credentials needs --type confidential")
        }
        if let unknown = scopes.first(where: { ManagementScope(rawValue: $0) == nil }) {
            throw AuthError.malformed("unknown scope \"\(unknown)\" (known: \(ManagementScope.allCases.map(\.rawValue).joined(separator: " ")))")
        }
        for uri in redirectURIs + postLogoutRedirectURIs where !Self.isRedirectURI(uri) {
            throw AuthError.malformed("\"\(uri.prefix(100))\" is not an absolute redirect URI without a fragment")
        }
        if requirePushedRequests, !grants.contains(GrantNames.authorizationCode) {
            throw AuthError.malformed("--require-par is for a client with the authorization_code grant")
        }
        if let uri = backchannelLogoutURI, !Self.isBackchannelLogoutURI(uri) {
            throw AuthError.malformed("--backchannel-logout-uri must be an https URI without a fragment (http only to a loopback address)")
        }
        // A client with keys authenticates with them alone: it has no secret to leak.
        let secret = type == "confidential" && keys == nil ? Base64URL.encode(random(32)) : nil
        let row = ClientRow(id: "c_" + Base64URL.encode(random(12)), name: name, type: type, secretHash: secret.map { Digest.sha256.hash(Array($0.utf8)) },
                            grants: grants, scopes: scopes, redirectURIs: redirectURIs, audiences: audiences, createdAt: nowMillis,
                            postLogoutRedirectURIs: postLogoutRedirectURIs, backchannelLogoutURI: backchannelLogoutURI, jwks: keys,
                            requirePushedRequests: requirePushedRequests)
        // Each change to the clients commits with its audit row.
        let method = keys == nil ? "" : ", private_key_jwt"
        let event = pendingAuditEvent(.adminClientAdded, client: caller.clientID, detail: "client \(row.id) (\(type)\(method)): \(grants.joined(separator: " "))", context: context)
        try store.insertClient(row, writes: [.audit(event)])
        counted(event)
        clients.invalidate()
        return AddedClient(client: row, secret: secret)
    }

    /// An absolute URI with a scheme and no fragment (RFC 6749 §3.1.2): `https://...`, a loopback
    /// `http://127.0.0.1/...`, or an app's private-use scheme (RFC 8252 §7.1).
    public static func isRedirectURI(_ uri: String) -> Bool {
        // `#` as a byte: followed by a combining mark it is part of another Character.
        guard uri.utf8.count <= 2000, !uri.utf8.contains(UInt8(ascii: "#")), let colon = uri.firstIndex(of: ":"), colon != uri.startIndex else { return false }
        let scheme = uri[..<colon]
        return scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "+" || $0 == "-" } && uri.index(after: colon) != uri.endIndex
    }

    /// Every client in the database.
    public func storedClients() throws -> [ClientRow] { try store.clientRows() }

    /// `signet admin clients remove`: a client added to the database goes, and every session
    /// issued to it ends in the same transaction (an app withdrawn, or its secret leaked).
    public func removeClient(id: String, by caller: ManagementCaller, context: RequestContext) throws {
        // Its sessions end with it: their access tokens are refused at once, not only at the next refresh.
        var event: AuditEvent?
        guard try store.deleteClient(id: id, at: nowMillis, writes: { ended in
            let removed = pendingAuditEvent(.adminClientRemoved, client: caller.clientID, detail: "client \(id), \(ended) session(s) ended", context: context)
            event = removed
            return [.audit(removed)]
        }) != nil else { throw AuthError(.clientUnknown, "no client \(id.prefix(64)) in the database") }
        event.map(counted)
        clients.invalidate()
    }

    /// New keys for a `private_key_jwt` client (a JWK Set; OIDC Core §9): assertions signed by a
    /// key it no longer lists stop verifying within the refresh interval of every running
    /// server. To roll a key over without a gap, list the old and the new key, move the client
    /// to the new one, then list the new one alone.
    public func setClientKeys(id: String, jwks: String, by caller: ManagementCaller, context: RequestContext) throws -> Int {
        let (keys, count) = try Self.keySet(jwks)
        let event = pendingAuditEvent(.adminClientKeysSet, client: caller.clientID, detail: "client \(id): \(count) key(s)", context: context)
        guard try store.setClientKeys(id: id, jwks: keys, writes: [.audit(event)]) else {
            throw AuthError(.clientUnknown, "no private_key_jwt client \(id.prefix(64)) in the database")
        }
        counted(event)
        clients.invalidate()
        return count
    }

    /// A JWK Set given by an administrator, checked (``JWKSet/keys(text:)``) and written back as
    /// compact JSON of its keys alone, with how many there are.
    static func keySet(_ text: String) throws -> (text: String, count: Int) {
        do {
            let keys = try JWKSet.keys(text: text)
            return (JSONValue.object(["keys": .array(keys.map(JSONValue.object))]).serialized, keys.count)
        } catch {
            throw AuthError.malformed("the JWK Set: \(error.detail)")
        }
    }

    /// A new secret for a confidential client; the old one stops working within the refresh
    /// interval of every running server.
    public func rotateClientSecret(id: String, by caller: ManagementCaller, context: RequestContext) throws -> String {
        let secret = Base64URL.encode(random(32))
        let event = pendingAuditEvent(.adminClientSecretRotated, client: caller.clientID, detail: "client \(id)", context: context)
        guard try store.setClientSecret(id: id, hash: Digest.sha256.hash(Array(secret.utf8)), writes: [.audit(event)]) else {
            throw AuthError(.clientUnknown, "no confidential client \(id.prefix(64)) in the database")
        }
        counted(event)
        clients.invalidate()
        return secret
    }
}
