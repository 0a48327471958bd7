public import Foundation
public import SignetCrypto
public import SignetWebAuthn

/// A DPoP proof that verified (RFC 9449 §4.3): the key it proves (its JWK and the RFC 7638
/// thumbprint `jkt`) and the claims a replay check and a nonce check need.
public struct DPoPProof: Sendable, Equatable {
    /// base64url SHA-256 of the key's canonical JWK (RFC 7638 §3): what `cnf.jkt` carries.
    public let jkt: String
    public let jti: String
    public let iat: Int64
    public let nonce: String?
    /// The public key, as its JWK members.
    public let jwk: JSONObject
}

/// What a proof is checked against: the request it came with.
public struct DPoPRequest: Sendable {
    /// `POST`, `GET`, ...
    public var method: String
    /// The request's URL without query and fragment (RFC 9449 §4.3 step 9).
    public var url: String
    /// The access token a resource request presents, for `ath` (§4.3 step 11); `nil` at the
    /// token endpoint.
    public var accessToken: String?
    public init(method: String, url: String, accessToken: String? = nil) {
        self.method = method
        self.url = url
        self.accessToken = accessToken
    }
}

/// DPoP proof verification (RFC 9449 §4.3), pure: no clock, store or nonce source of its own.
/// Replay (`jti`) and nonce checks are the caller's, with the values returned.
public enum DPoP {
    /// The algorithms Signet accepts (discovery's `dpop_signing_alg_values_supported`).
    public static let algorithms = ["ES256", "EdDSA"]
    /// How far a proof's `iat` may be from now, either way, in seconds.
    public static let window: Int64 = 60

    public struct Invalid: Error, Sendable {
        public let detail: String
    }

    /// Checks steps 1–11 of §4.3 but the nonce and replay: one compact JWS with `typ:
    /// dpop+jwt`, an accepted `alg`, a public `jwk` it verifies with, `htm` and `htu` of this
    /// request, `iat` within ``window`` of `now`, a `jti`, and `ath` when a token is presented.
    /// Keys already parsed, by their JWK's coordinates: a client proves with one key many times.
    static let keys = BoundedCache<String, PublicKey>(capacity: 10_000)

    public static func verify(_ proof: String, for request: DPoPRequest, now: Date) throws(Invalid) -> DPoPProof {
        guard proof.utf8.count <= 4096 else { throw Invalid(detail: "proof longer than 4096 bytes") }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { throw Invalid(detail: "not a compact JWS") }
        let json = StrictJSON(maxDepth: 4, maxLength: 4096)
        guard let header = try? json.parse(headerBytes).object, let claims = try? json.parse(payloadBytes).object else {
            throw Invalid(detail: "header or claims are not JSON objects")
        }
        guard header["typ"] == .string("dpop+jwt") else { throw Invalid(detail: "typ is not dpop+jwt") }
        // RFC 7515 §4.1.11: a JWS whose `crit` names an extension the recipient does not
        // understand is invalid, and Signet understands none.
        guard header["crit"] == nil else { throw Invalid(detail: "the header has crit") }
        guard let alg = header["alg"]?.string, algorithms.contains(alg) else { throw Invalid(detail: "alg \(header["alg"]?.string ?? "absent") is not ES256 or EdDSA") }
        guard let jwk = header["jwk"]?.object else { throw Invalid(detail: "no jwk in the header") }
        let (key, jkt) = try publicKey(jwk, alg: alg)
        let message = Array(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let verified: Bool
        if alg == "ES256" {
            guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else { throw Invalid(detail: "an ES256 signature is 64 bytes") }
            verified = key.verify(signature: der, message: message, scheme: .ecdsa(.sha256))
        } else {
            verified = signature.count == 64 && key.verify(signature: signature, message: message, scheme: .eddsa)
        }
        guard verified else { throw Invalid(detail: "the signature does not verify with the header's jwk") }
        guard claims["htm"] == .string(request.method) else { throw Invalid(detail: "htm \(claims["htm"]?.string ?? "absent") is not \(request.method)") }
        guard let htu = claims["htu"]?.string, htu.isExactly(request.url) || sameAfterNormalization(htu, request.url) else {
            throw Invalid(detail: "htu \(claims["htu"]?.string?.prefix(200) ?? "absent") is not \(request.url)")
        }
        guard let iat = claims["iat"].flatMap(numericDate) else { throw Invalid(detail: "no iat (a NumericDate)") }
        let age = Int64(now.timeIntervalSince1970) - iat
        guard abs(age) <= window else { throw Invalid(detail: "iat is \(age) s from now (at most \(window))") }
        guard let jti = claims["jti"]?.string, !jti.isEmpty, jti.utf8.count <= 256 else { throw Invalid(detail: "no jti (or longer than 256)") }
        if let token = request.accessToken {
            guard claims["ath"] == .string(Base64URL.encode(Digest.sha256.hash(Array(token.utf8)))) else {
                throw Invalid(detail: "ath is not the hash of the presented access token")
            }
        }
        let nonce = claims["nonce"]?.string
        return DPoPProof(jkt: jkt, jti: jti, iat: iat, nonce: nonce, jwk: jwk)
    }

    /// The key of a public JWK (RFC 7517) for `alg`, and its RFC 7638 thumbprint; a JWK with
    /// private members is refused (§4.3 step 7).
    public static func publicKey(_ jwk: JSONObject, alg: String) throws(Invalid) -> (PublicKey, String) {
        for member in ["d", "p", "q", "dp", "dq", "qi", "k"] where jwk[member] != nil { throw Invalid(detail: "the jwk holds private member \(member)") }
        switch (alg, jwk["kty"]?.string, jwk["crv"]?.string) {
        case ("ES256", "EC", "P-256"):
            guard let x = jwk["x"]?.string, let y = jwk["y"]?.string, let xb = Base64URL.decode(x), let yb = Base64URL.decode(y), xb.count == 32, yb.count == 32,
                  let key = try? keys.value(for: "P-256 " + x + " " + y, make: { try PublicKey(curve: .p256, x: xb, y: yb) })
            else { throw Invalid(detail: "the jwk is not a P-256 point") }
            return (key, thumbprint(#"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#))
        case ("EdDSA", "OKP", "Ed25519"):
            guard let x = jwk["x"]?.string, let xb = Base64URL.decode(x), xb.count == 32,
                  let key = try? keys.value(for: "Ed25519 " + x, make: { try PublicKey(edwards: .ed25519, raw: xb) }) else {
                throw Invalid(detail: "the jwk is not an Ed25519 key")
            }
            return (key, thumbprint(#"{"crv":"Ed25519","kty":"OKP","x":"\#(x)"}"#))
        default:
            throw Invalid(detail: "the jwk is not a P-256 (ES256) or Ed25519 (EdDSA) public key")
        }
    }

    /// The whole seconds of a JWT NumericDate (RFC 7519 §2), which may have a fraction or an
    /// exponent (`1733234567.25`, as a client that reads its clock as a double sends it).
    static func numericDate(_ value: JSONValue) -> Int64? {
        if let seconds = value.int64 { return seconds }
        guard case .number(let text) = value, let seconds = Double(text), seconds.isFinite, abs(seconds) < 1e15 else { return nil }
        return Int64(seconds.rounded(.down))
    }

    /// RFC 7638 §3: SHA-256 of the required members in lexicographic order, no white space.
    static func thumbprint(_ canonical: String) -> String { Base64URL.encode(Digest.sha256.hash(Array(canonical.utf8))) }

    /// The thumbprint of a P-256 key given as SPKI DER or an X9.63 point (an enrolled device key).
    public static func thumbprint(p256 key: PublicKey) -> String? {
        guard let point = key.x963, point.count == 65 else { return nil }
        let x = Base64URL.encode(Array(point[1..<33])), y = Base64URL.encode(Array(point[33..<65]))
        return thumbprint(#"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#)
    }

    /// A URL compared as RFC 9449 §4.3 step 9 says (RFC 3986 §6.2.2–6.2.3): scheme and host in
    /// lower case, a default port dropped, the path's escapes normalized and its dot segments
    /// removed, an empty path as `/`, no query or fragment.
    package static func normalized(_ url: String) -> String? {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(),
              let path = normalizedPath(components.percentEncodedPath)
        else { return nil }
        components.scheme = scheme
        components.host = host
        if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80) { components.port = nil }
        components.percentEncodedPath = path.isEmpty ? "/" : path
        components.query = nil
        components.fragment = nil
        return components.string
    }

    /// RFC 3986 §6.2.2.2 and §6.2.2.3: an escaped unreserved character decoded, the other
    /// escapes in upper case, then the dot segments removed (§5.2.4). `nil` for a broken escape.
    package static func normalizedPath(_ path: String) -> String? {
        var bytes: [UInt8] = []
        var input = Array(path.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            let digits = input.prefix(2).map { Character(Unicode.Scalar($0)) }
            guard digits.count == 2, let high = digits[0].hexDigitValue, let low = digits[1].hexDigitValue else { return nil }
            input.removeFirst(2)
            let decoded = UInt8(high << 4 | low)
            if isUnreserved(decoded) { bytes.append(decoded) } else { bytes += Array("%\(digits[0].uppercased())\(digits[1].uppercased())".utf8) }
        }
        var output: [Substring] = []
        let segments = String(decoding: bytes, as: UTF8.self).split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".": if last { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if last { output.append("") }
            default: output.append(segment)
            }
        }
        return output.joined(separator: "/")
    }

    /// Whether two URLs are the same after ``normalized(_:)``, byte for byte. Both must parse:
    /// two that do not are not thereby the same URL.
    static func sameAfterNormalization(_ a: String, _ b: String) -> Bool {
        guard let first = normalized(a), let second = normalized(b) else { return false }
        return first.isExactly(second)
    }

    /// RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
        }
    }
}
