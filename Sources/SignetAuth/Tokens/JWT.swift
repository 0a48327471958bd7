import Foundation
import SignetCrypto
import SignetWebAuthn

/// JSON Web Tokens (RFC 7519) signed with ES256 (RFC 7518 §3.4: `r || s`, 64 bytes).
enum JWT {
    /// Signs `claims` with the ring's current key; `type` goes into the `typ` header
    /// (`at+jwt` for access tokens, RFC 9068 §2.1).
    static func sign(claims: JSONObject, type: String, keys: KeyRing) throws -> String {
        var payload = JSONObjectWriter()
        for (name, value) in claims { payload.add(name, value) }
        return try sign(payload: payload, type: type, keys: keys)
    }

    /// Signs the claims `payload` already holds.
    static func sign(payload: JSONObjectWriter, type: String, keys: KeyRing) throws -> String {
        let (kid, key) = keys.signingKey
        var header = JSONObjectWriter(capacity: 64)
        header.add("alg", "ES256")
        header.add("kid", kid)
        header.add("typ", type)
        let body = payload.serializedBytes
        // The JWS signing input (RFC 7515 §5.1), then the signature.
        var token: [UInt8] = []
        token.reserveCapacity((64 + body.count) * 4 / 3 + 100)
        Base64URL.append(header.serializedBytes, to: &token)
        token.append(UInt8(ascii: "."))
        Base64URL.append(body, to: &token)
        let der = try key.sign(token, scheme: .ecdsa(.sha256))
        guard let raw = ECDSASignature.raw(fromDER: der, width: 32) else { throw CryptoError(.library, "ECDSA signature conversion") }
        token.append(UInt8(ascii: "."))
        Base64URL.append(raw, to: &token)
        return String(decoding: token, as: UTF8.self)
    }

    struct Invalid: Error {
        let detail: String
    }

    /// Verifies a token made by ``sign(claims:type:keys:)``: signature with a published key,
    /// `typ`, issuer and expiry. Returns the claims.
    static func verify(_ token: String, type: String, issuer: String, keys: KeyRing, now: Date) throws(Invalid) -> JSONObject {
        guard token.utf8.count <= 8192 else { throw Invalid(detail: "token too long") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]), signature.count == 64
        else { throw Invalid(detail: "not a compact JWS") }
        let json = StrictJSON(maxDepth: 8, maxLength: 8192)
        guard let header = try? json.parse(headerBytes).object, let claims = try? json.parse(payloadBytes).object else {
            throw Invalid(detail: "header or claims are not JSON objects")
        }
        guard header["alg"] == .string("ES256"), header["typ"] == .string(type), let kid = header["kid"]?.string else {
            throw Invalid(detail: "unexpected alg, typ or kid")
        }
        guard let key = keys.publicKey(kid: kid), let der = ECDSASignature.der(fromRaw: signature),
              key.verify(signature: der, message: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)), scheme: .ecdsa(.sha256))
        else { throw Invalid(detail: "signature does not verify with a published key") }
        guard claims["iss"] == .string(issuer) else { throw Invalid(detail: "issuer differs") }
        guard let exp = claims["exp"]?.int64, Double(exp) > now.timeIntervalSince1970 else { throw Invalid(detail: "expired") }
        return claims
    }
}
