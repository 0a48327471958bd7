import Foundation
import SignetCrypto
import SignetWebAuthn

/// A software DPoP key (RFC 9449): it makes proof JWTs as an app's Secure Enclave or Keystore
/// key would, ES256 or EdDSA. For the SDK's tests, the CLI and demos; a device key can make
/// proofs too (``init(deviceKey:)``), for refresh by device key.
public final class SoftwareDPoPKey: @unchecked Sendable {
    let key: PrivateKey
    /// `ES256` or `EdDSA`.
    public let algorithm: String

    public init(algorithm: String = "ES256") throws {
        self.algorithm = algorithm
        key = try PrivateKey.generate(algorithm == "EdDSA" ? .edwards(.ed25519) : .ec(.p256))
    }

    /// A P-256 key from its DER private key (a state file's).
    public init(privateKeyDER: [UInt8]) throws {
        algorithm = "ES256"
        key = try PrivateKey(der: privateKeyDER)
    }

    /// The DER private key, for state files; secret.
    public var privateKeyDER: [UInt8] { key.der }

    /// Proofs signed by a device key (P-256).
    public init(deviceKey: SoftwareDeviceKey) {
        algorithm = "ES256"
        key = deviceKey.key
    }

    /// The public JWK (RFC 7517) that goes into every proof's header, members in RFC 7638 order.
    public var jwk: [(String, String)] {
        if algorithm == "EdDSA" { return [("crv", "Ed25519"), ("kty", "OKP"), ("x", Base64URL.encode(key.publicKey.rawEdwards ?? []))] }
        let point = key.publicKey.x963 ?? []
        return [("crv", "P-256"), ("kty", "EC"), ("x", Base64URL.encode(Array(point.dropFirst().prefix(32)))), ("y", Base64URL.encode(Array(point.suffix(32))))]
    }

    /// The RFC 7638 thumbprint: what `cnf.jkt` names.
    public var thumbprint: String {
        let canonical = "{" + jwk.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
        return Base64URL.encode(Digest.sha256.hash(Array(canonical.utf8)))
    }

    /// What the SDK's ``DPoPKeyStore`` gives: DER ECDSA for ES256, the raw signature for EdDSA.
    public func signDER(_ message: [UInt8]) throws -> [UInt8] {
        try key.sign(message, scheme: algorithm == "EdDSA" ? .eddsa : .ecdsa(.sha256))
    }

    /// A proof for one request (RFC 9449 §4.2). `ath` is added when `accessToken` is given;
    /// `iat`, `jti` and the header's `typ` can be set wrong on purpose by tests.
    public func proof(method: String, url: String, accessToken: String? = nil, nonce: String? = nil, iat: Int64? = nil, jti: String? = nil,
                      type: String = "dpop+jwt") throws -> String {
        var jwkObject = JSONObjectWriter(capacity: 200)
        for (name, value) in jwk { jwkObject.add(name, value) }
        var header = JSONObjectWriter(capacity: 300)
        header.add("alg", algorithm)
        header.add("jwk", try StrictJSON().parse(jwkObject.serializedBytes))
        header.add("typ", type)
        var claims = JSONObjectWriter(capacity: 300)
        claims.add("htm", method)
        claims.add("htu", url)
        claims.add("iat", iat ?? Int64(Date().timeIntervalSince1970))
        claims.add("jti", jti ?? Base64URL.encode(SecureRandom.bytes(16)))
        if let accessToken { claims.add("ath", Base64URL.encode(Digest.sha256.hash(Array(accessToken.utf8)))) }
        if let nonce { claims.add("nonce", nonce) }
        let input = Base64URL.encode(header.serializedBytes) + "." + Base64URL.encode(claims.serializedBytes)
        var signature: [UInt8]
        if algorithm == "EdDSA" {
            signature = try key.sign(Array(input.utf8), scheme: .eddsa)
        } else {
            let der = try key.sign(Array(input.utf8), scheme: .ecdsa(.sha256))
            guard let raw = ECDSASignature.raw(fromDER: der, width: 32) else { throw CryptoError(.library, "ECDSA signature conversion") }
            signature = raw
        }
        return input + "." + Base64URL.encode(signature)
    }
}
