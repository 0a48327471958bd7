public import Foundation
import SignetCrypto
public import SignetWebAuthn

/// A machine client's own signing key for `private_key_jwt` (OIDC Core §9, RFC 7523 §2.2): it
/// makes the client assertions a confidential client sends instead of a secret, and the public
/// JWK Set Signet registers for it. For `signet client-key`, demos and tests; a production
/// client keeps its key in its own secret store or HSM.
public final class SoftwareClientKey: @unchecked Sendable {
    let key: PrivateKey
    /// `ES256`, `EdDSA`, `PS256` or `RS256` (RFC 7518 §3.1, RFC 8037 §3.1).
    public let algorithm: String
    /// The key's ID, in its JWK and in each assertion's header; empty: neither names it.
    public let kid: String

    /// A new key for `algorithm`; RSA keys are 2048 bits.
    public init(algorithm: String = "ES256", kid: String? = nil) throws {
        let kind: PrivateKey.Kind
        switch algorithm {
        case "ES256": kind = .ec(.p256)
        case "EdDSA": kind = .edwards(.ed25519)
        case "PS256", "RS256": kind = .rsa(bits: 2048)
        default: throw CryptoError(.unsupportedKey, "algorithm \(algorithm) is not ES256, EdDSA, PS256 or RS256")
        }
        self.algorithm = algorithm
        key = try PrivateKey.generate(kind)
        self.kid = kid ?? Base64URL.encode(SecureRandom.bytes(9))
    }

    /// A key from its DER (``privateKeyDER``), e.g. a key file's.
    public init(privateKeyDER: [UInt8], algorithm: String, kid: String) throws {
        key = try PrivateKey(der: privateKeyDER)
        self.algorithm = algorithm
        self.kid = kid
    }

    /// The DER private key; secret.
    public var privateKeyDER: [UInt8] { key.der }

    /// The private key as PEM (RFC 7468): SEC 1 for P-256, PKCS #1 for RSA, PKCS #8 for
    /// Ed25519, as OpenSSL writes each; what an OAuth library loads. Secret.
    public var privateKeyPEM: String {
        let label = algorithm == "ES256" ? "EC PRIVATE KEY" : algorithm == "EdDSA" ? "PRIVATE KEY" : "RSA PRIVATE KEY"
        let body = Data(key.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }

    /// The public JWK (RFC 7517 §4), with `kid`, `alg` and `use`.
    public var jwk: JSONObject {
        var members: JSONObject = ["alg": .string(algorithm), "use": .string("sig")]
        if !kid.isEmpty { members["kid"] = .string(kid) }
        let publicKey = key.publicKey
        switch algorithm {
        case "EdDSA":
            members["kty"] = .string("OKP")
            members["crv"] = .string("Ed25519")
            members["x"] = .string(Base64URL.encode(publicKey.rawEdwards ?? []))
        case "PS256", "RS256":
            let (n, e) = publicKey.rsaComponents ?? ([], [])
            members["kty"] = .string("RSA")
            members["n"] = .string(Base64URL.encode(n))
            members["e"] = .string(Base64URL.encode(e))
        default:
            let point = publicKey.x963 ?? []
            members["kty"] = .string("EC")
            members["crv"] = .string("P-256")
            members["x"] = .string(Base64URL.encode(Array(point.dropFirst().prefix(32))))
            members["y"] = .string(Base64URL.encode(Array(point.suffix(32))))
        }
        return members
    }

    /// The JWK Set (RFC 7517 §5) of this key alone: what `signet admin clients add --jwks` takes.
    public var jwks: JSONValue { .object(["keys": .array([.object(jwk)])]) }

    /// A client assertion (OIDC Core §9): `iss` and `sub` the client, `aud` the token endpoint (or
    /// the issuer), `exp` `lifetime` seconds from `now`, a fresh `jti`.
    public func assertion(clientID: String, audience: String, lifetime: Int64 = 60, now: Date = Date()) throws -> String {
        let at = Int64(now.timeIntervalSince1970)
        var header: JSONObject = ["alg": .string(algorithm), "typ": .string("JWT")]
        if !kid.isEmpty { header["kid"] = .string(kid) }
        return try sign(header: header, claims: [
            "iss": .string(clientID), "sub": .string(clientID), "aud": .string(audience), "iat": .number(String(at)),
            "exp": .number(String(at + lifetime)), "jti": .string(Base64URL.encode(SecureRandom.bytes(16))),
        ])
    }

    /// A compact JWS of `header` and `claims` as given, signed with this key under `algorithm`
    /// whatever the header says: tests set members wrong on purpose.
    public func sign(header: JSONObject, claims: JSONObject) throws -> String {
        let input = Base64URL.encode(JSONValue.object(header).serializedBytes) + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes)
        let message = Array(input.utf8)
        let signature: [UInt8]
        switch algorithm {
        case "EdDSA": signature = try key.sign(message, scheme: .eddsa)
        case "PS256": signature = try key.sign(message, scheme: .rsaPSS(.sha256))
        case "RS256": signature = try key.sign(message, scheme: .rsaPKCS1(.sha256))
        default:
            guard let raw = ECDSASignature.raw(fromDER: try key.sign(message, scheme: .ecdsa(.sha256)), width: 32) else {
                throw CryptoError(.library, "ECDSA signature conversion")
            }
            signature = raw
        }
        return input + "." + Base64URL.encode(signature)
    }
}
