import Foundation
import SignetCrypto
package import SignetWebAuthn

/// JSON Web Tokens (RFC 7519) signed with ES256 (RFC 7518 §3.4: `r || s`, 64 bytes).
package enum JWT {
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
        let raw = try key.signES256(token)
        token.append(UInt8(ascii: "."))
        Base64URL.append(raw, to: &token)
        return String(decoding: token, as: UTF8.self)
    }

    package struct Invalid: Error {
        package let detail: String
    }

    /// A token as Signet makes them, taken apart and nothing verified: compact JWS (RFC 7515
    /// §7.1), ES256, the `typ` given, a `kid`.
    package struct Parts {
        package let kid: String
        /// The bytes the signature covers: the header and claims as sent, with the dot.
        package let signed: [UInt8]
        /// The signature in DER, as OpenSSL verifies it.
        package let signature: [UInt8]
        package let claims: JSONObject
    }

    /// Takes `token` apart (bounded: 8 KiB, JSON 8 deep): the first half of
    /// ``verify(_:type:issuer:keys:now:)``, which needs no key.
    package static func parse(_ token: String, type: String) throws(Invalid) -> Parts {
        guard token.utf8.count <= 8192 else { throw Invalid(detail: "token too long") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let raw = Base64URL.decode(parts[2]), raw.count == 64, let signature = ECDSASignature.der(fromRaw: raw)
        else { throw Invalid(detail: "not a compact JWS") }
        let json = StrictJSON(maxDepth: 8, maxLength: 8192)
        guard let header = try? json.parse(headerBytes).object, let claims = try? json.parse(payloadBytes).object else {
            throw Invalid(detail: "header or claims are not JSON objects")
        }
        guard header["alg"] == .string("ES256"), header["typ"] == .string(type), let kid = header["kid"]?.string else {
            throw Invalid(detail: "unexpected alg, typ or kid")
        }
        return Parts(kid: kid, signed: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)), signature: signature, claims: claims)
    }

    /// Verifies a token made by ``sign(claims:type:keys:)``: signature with a published key,
    /// `typ`, issuer and expiry. Returns the claims.
    static func verify(_ token: String, type: String, issuer: String, keys: KeyRing, now: Date) throws(Invalid) -> JSONObject {
        let parts = try parse(token, type: type)
        let claims = parts.claims
        guard let key = keys.publicKey(kid: parts.kid), key.verify(signature: parts.signature, message: parts.signed, scheme: .ecdsa(.sha256))
        else { throw Invalid(detail: "signature does not verify with a published key") }
        guard claims["iss"] == .string(issuer) else { throw Invalid(detail: "issuer differs") }
        guard let exp = claims["exp"]?.int64, Double(exp) > now.timeIntervalSince1970 else { throw Invalid(detail: "expired") }
        return claims
    }
}
