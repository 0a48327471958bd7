import SignetCrypto
public import SignetWebAuthn

/// A client's authentication by a JWT it signed with a key of its own (`private_key_jwt`, OIDC
/// Core §9; RFC 7523 §2.2 and §3; RFC 7521 §4.2): no shared secret ever leaves the client, and
/// Signet keeps only its public keys. What came with a request (`client_assertion_type`,
/// `client_assertion`, and the URL it was sent to) and the pure check of it; the replay check
/// on `jti` is the caller's, in the database.
public struct ClientAssertion: Sendable {
    /// RFC 7523 §2.2: the only `client_assertion_type` Signet understands.
    public static let jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The algorithms a client may sign with (discovery's `token_endpoint_auth_signing_alg_values_supported`).
    public static let algorithms = ["ES256", "EdDSA", "PS256", "RS256"]
    /// The longest an assertion may live, from now to its `exp`, in seconds: what the database
    /// must remember its `jti` for.
    public static let maxLifetime: Int64 = 3600
    /// How far the client's clock may be from Signet's, either way, in seconds.
    public static let leeway: Int64 = 60
    /// The most keys a client may register.
    public static let maxKeys = 10
    static let maxLength = 8192

    /// `client_assertion_type` as sent, or `nil`.
    public var type: String?
    /// `client_assertion` as sent, or `nil`.
    public var jwt: String?
    /// The URL the request was sent to, one of the audiences the assertion may name.
    public var endpoint: String

    public init(type: String?, jwt: String?, endpoint: String) {
        self.type = type
        self.jwt = jwt
        self.endpoint = endpoint
    }

    public struct Invalid: Error, Sendable {
        public let detail: String
        /// Whether no key of the set given made the signature: one the client published since
        /// might (``ClientKeySource``).
        public let keyMismatch: Bool
        init(_ detail: String, keyMismatch: Bool = false) {
            self.detail = detail
            self.keyMismatch = keyMismatch
        }
    }

    /// An assertion that verified: what its single use is recorded by.
    public struct Verified: Sendable, Equatable {
        public let jti: String
        public let exp: Int64
    }

    /// The `iss` of an assertion, not yet verified: the client a request without `client_id`
    /// names (RFC 7521 §4.2: `client_id` is then unnecessary).
    public static func issuer(of jwt: String) -> String? {
        guard jwt.utf8.count <= maxLength else { return nil }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]) else { return nil }
        return (try? StrictJSON(maxDepth: 4, maxLength: maxLength).parse(payload))?["iss"]?.string
    }

    /// OIDC Core §9 and RFC 7523 §3, in order: one compact JWS of at most 8 KiB; no `crit`; a
    /// `typ`, if any, of `JWT` or `client-authentication+jwt` (never a DPoP proof, an access or a
    /// logout token); an accepted `alg` (never `none` or a MAC); a signature by one of `keys`
    /// (the one `kid` names, else each key of the algorithm's type); `iss` and `sub` both
    /// `clientID`; an `aud` that names one of `audiences`; an `exp` after `now` but within
    /// ``maxLifetime``; `nbf` and `iat`, if any, not after `now`; and a `jti`. Each bound allows
    /// ``leeway`` for the client's clock.
    public static func verify(_ jwt: String, clientID: String, keys: [JSONObject], audiences: [String], now: Int64) throws(Invalid) -> Verified {
        guard jwt.utf8.count <= maxLength else { throw Invalid("the assertion is longer than \(maxLength) bytes") }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { throw Invalid("the assertion is not a compact JWS") }
        let json = StrictJSON(maxDepth: 4, maxLength: maxLength)
        guard let header = try? json.parse(headerBytes).object, let claims = try? json.parse(payloadBytes).object else {
            throw Invalid("the assertion's header or claims are not JSON objects")
        }
        // RFC 7515 §4.1.11: Signet understands no extension.
        guard header["crit"] == nil else { throw Invalid("the header has crit") }
        if let typ = header["typ"] {
            guard let text = typ.string?.lowercased(), text == "jwt" || text == "client-authentication+jwt" else {
                throw Invalid("typ \(typ.string?.prefix(40) ?? "not a string") is not JWT or client-authentication+jwt")
            }
        }
        guard let alg = header["alg"]?.string, algorithms.contains(alg) else {
            throw Invalid("alg \(header["alg"]?.string?.prefix(20) ?? "absent") is not one of \(algorithms.joined(separator: ", "))")
        }
        let candidates: [JSONObject]
        if let kid = header["kid"] {
            candidates = keys.filter { $0["kid"] == kid }
            guard !candidates.isEmpty else { throw Invalid("no registered key has kid \(kid.string?.prefix(64) ?? "(not a string)")", keyMismatch: true) }
        } else {
            candidates = keys.filter { JWKSet.fits($0, alg: alg) }
            guard !candidates.isEmpty else { throw Invalid("no registered key is for \(alg)", keyMismatch: true) }
        }
        let message = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard candidates.contains(where: { JWKSet.verifies($0, alg: alg, signature: signature, message: message) }) else {
            throw Invalid("the signature does not verify with the client's \(alg) key\(candidates.count == 1 ? "" : "s")", keyMismatch: true)
        }
        guard claims["iss"]?.string.map({ $0.isExactly(clientID) }) == true else { throw Invalid("iss is not the client's ID") }
        guard claims["sub"]?.string.map({ $0.isExactly(clientID) }) == true else { throw Invalid("sub is not the client's ID") }
        let aud = claims["aud"]?.string.map { [$0] } ?? claims["aud"]?.array?.compactMap(\.string) ?? []
        guard aud.contains(where: { audiences.containsExactly($0) }) else {
            throw Invalid("aud names neither the issuer nor this endpoint (\(audiences.joined(separator: ", ")))")
        }
        guard let exp = claims["exp"].flatMap(DPoP.numericDate) else { throw Invalid("no exp (a NumericDate)") }
        guard exp > now - leeway else { throw Invalid("the assertion expired \(now - exp) s ago") }
        guard exp <= now + maxLifetime + leeway else { throw Invalid("exp is \(exp - now) s from now (at most \(maxLifetime))") }
        if let nbf = claims["nbf"] {
            guard let seconds = DPoP.numericDate(nbf), seconds <= now + leeway else { throw Invalid("nbf is not a NumericDate or is in the future") }
        }
        if let iat = claims["iat"] {
            guard let seconds = DPoP.numericDate(iat), seconds <= now + leeway else { throw Invalid("iat is not a NumericDate or is in the future") }
        }
        guard let jti = claims["jti"]?.string, !jti.isEmpty, jti.utf8.count <= 256 else { throw Invalid("no jti (or longer than 256 bytes)") }
        return Verified(jti: jti, exp: exp)
    }
}

/// A client's public keys as registered (a JWK Set, RFC 7517 §5), for ``ClientAssertion``.
public enum JWKSet {
    /// The keys of a JWK Set, checked as a registration is: at most ``ClientAssertion/maxKeys``
    /// keys, each public (no private member), for signing (`use`, if any, `sig`), of an accepted
    /// type (P-256, Ed25519, or RSA of 2048 to 8192 bits), with an `alg`, if any, that fits it,
    /// and a `kid`, if any, that no other key has.
    public static func keys(_ value: JSONValue) throws(ClientAssertion.Invalid) -> [JSONObject] {
        guard let list = value["keys"]?.array else { throw .init("a JWK Set is an object with a \"keys\" list") }
        guard !list.isEmpty, list.count <= ClientAssertion.maxKeys else { throw .init("a JWK Set needs 1 to \(ClientAssertion.maxKeys) keys") }
        var kids: [JSONValue] = []
        return try list.enumerated().map { (index, item) throws(ClientAssertion.Invalid) -> JSONObject in
            guard let jwk = item.object else { throw .init("keys[\(index)] is not an object") }
            if let use = jwk["use"], use != .string("sig") { throw .init("keys[\(index)]: use must be sig") }
            if let kid = jwk["kid"] {
                guard kid.string.map({ !$0.isEmpty && $0.utf8.count <= 256 }) == true else { throw .init("keys[\(index)]: kid must be a string of 1 to 256 bytes") }
                guard !kids.contains(kid) else { throw .init("keys[\(index)]: kid \(kid.string ?? "") is used twice") }
                kids.append(kid)
            }
            let algs = jwk["alg"].map { [$0.string ?? ""] } ?? ClientAssertion.algorithms.filter { fits(jwk, alg: $0) }
            guard let alg = algs.first, ClientAssertion.algorithms.contains(alg), fits(jwk, alg: alg) else {
                throw .init("keys[\(index)]: not a P-256, Ed25519 or RSA key (or its alg does not fit it)")
            }
            do throws(ClientAssertion.Invalid) {
                _ = try publicKey(jwk, alg: alg)
            } catch {
                throw .init("keys[\(index)]: \(error.detail)")
            }
            return jwk
        }
    }

    /// The keys of a JWK Set given as JSON text of at most 64 KiB, checked as ``keys(_:)`` checks them.
    public static func keys(text: String) throws(ClientAssertion.Invalid) -> [JSONObject] {
        guard text.utf8.count <= 64 * 1024, let value = try? StrictJSON(maxDepth: 6, maxLength: 64 * 1024).parse(Array(text.utf8)) else {
            throw .init("the JWK Set is not JSON of at most 64 KiB")
        }
        return try keys(value)
    }

    /// Whether `jwk` is of the type `alg` signs with, and names no other `alg`.
    static func fits(_ jwk: JSONObject, alg: String) -> Bool {
        if let named = jwk["alg"], named != .string(alg) { return false }
        switch alg {
        case "ES256": return jwk["kty"] == .string("EC") && jwk["crv"] == .string("P-256")
        case "EdDSA": return jwk["kty"] == .string("OKP") && jwk["crv"] == .string("Ed25519")
        case "PS256", "RS256": return jwk["kty"] == .string("RSA")
        default: return false
        }
    }

    /// Whether `signature` over `message` verifies with `jwk` under `alg` (RFC 7518 §3).
    static func verifies(_ jwk: JSONObject, alg: String, signature: [UInt8], message: [UInt8]) -> Bool {
        guard fits(jwk, alg: alg), let key = try? publicKey(jwk, alg: alg) else { return false }
        switch alg {
        case "ES256":
            guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else { return false }
            return key.verify(signature: der, message: message, scheme: .ecdsa(.sha256))
        case "EdDSA": return signature.count == 64 && key.verify(signature: signature, message: message, scheme: .eddsa)
        case "PS256": return key.verify(signature: signature, message: message, scheme: .rsaPSS(.sha256))
        case "RS256": return key.verify(signature: signature, message: message, scheme: .rsaPKCS1(.sha256))
        default: return false
        }
    }

    /// The key of a public JWK: an RSA one here, the others as a DPoP proof's (which refuses
    /// private members).
    static func publicKey(_ jwk: JSONObject, alg: String) throws(ClientAssertion.Invalid) -> PublicKey {
        guard jwk["kty"] == .string("RSA") else {
            do {
                return try DPoP.publicKey(jwk, alg: alg == "EdDSA" ? "EdDSA" : "ES256").0
            } catch {
                throw .init(error.detail)
            }
        }
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth"] where jwk[member] != nil { throw .init("the jwk holds private member \(member)") }
        guard let n = jwk["n"]?.string, let e = jwk["e"]?.string, let nb = Base64URL.decode(n), let eb = Base64URL.decode(e),
              let key = try? DPoP.keys.value(for: "RSA " + n + " " + e, make: { try PublicKey(rsaModulus: nb, exponent: eb) })
        else { throw .init("the jwk is not an RSA public key of \(PublicKey.rsaBits.lowerBound) to \(PublicKey.rsaBits.upperBound) bits") }
        return key
    }
}
