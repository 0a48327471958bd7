import SignetCrypto
import Foundation

/// A compact JWS (RFC 7515 §7.1) signed by the key of the first certificate of its header's
/// `x5c` (§4.1.6), or by a key the reader already trusts when the header has no `x5c`: Android
/// SafetyNet's attestation response (WebAuthn L3 §8.5) and the FIDO Metadata Service's BLOB
/// (FIDO MDS 3.0 §3.1.7). Parsing and the signature only; the caller judges the chain.
struct CertifiedJWS {
    /// Why a JWS was refused; the caller words it as its own failure.
    struct Refusal: Error {
        let detail: String
        /// Which part failed: `jws`, `x5c`, `alg` or `signature`.
        let part: String
    }

    let header: JSONValue
    let payload: JSONValue
    /// `x5c`, leaf first; empty when the header has none.
    let chain: [Certificate]

    /// - Parameters:
    ///   - json: the parser for the header and the payload (its length bounds each).
    ///   - maxCertificates: the most certificates `x5c` may hold.
    ///   - algorithms: the `alg` values accepted, RFC 7518 §3.1 names.
    ///   - fallbackKey: the key that signs when the header has no `x5c`; without one an `x5c` is required.
    init(_ bytes: [UInt8], json: StrictJSON, maxCertificates: Int, algorithms: Set<String>, fallbackKey: PublicKey? = nil) throws(Refusal) {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(bytes: parts[0]),
              let payloadBytes = Base64URL.decode(bytes: parts[1]), let signature = Base64URL.decode(bytes: parts[2])
        else { throw Refusal(detail: "not a compact JWS", part: "jws") }
        guard let header = try? json.parse(headerBytes), header.object != nil, let payload = try? json.parse(payloadBytes) else {
            throw Refusal(detail: "the JWS header or payload is not JSON", part: "jws")
        }
        var chain: [Certificate] = []
        if let x5c = header["x5c"] {
            guard let items = x5c.array, !items.isEmpty, items.count <= maxCertificates else {
                throw Refusal(detail: "x5c is not a list of 1 to \(maxCertificates) certificates", part: "x5c")
            }
            for item in items {
                guard let text = item.string, let data = Data(base64Encoded: text), let cert = try? Certificate(der: [UInt8](data)) else {
                    throw Refusal(detail: "an x5c entry is not a base64 DER certificate", part: "x5c")
                }
                chain.append(cert)
            }
        }
        guard let alg = header["alg"]?.string, algorithms.contains(alg), let scheme = Self.scheme(alg) else {
            throw Refusal(detail: "alg \(header["alg"]?.string?.prefix(16) ?? "absent") is not one of \(algorithms.sorted().joined(separator: ", "))", part: "alg")
        }
        var sig = signature
        if case .ecdsa = scheme {
            guard sig.count == 64, let der = ECDSASignature.der(fromRaw: sig) else { throw Refusal(detail: "an \(alg) signature is 64 bytes", part: "signature") }
            sig = der
        }
        let key: PublicKey
        if let leaf = chain.first {
            guard let leafKey = try? leaf.publicKey() else { throw Refusal(detail: "the x5c leaf has no usable key", part: "x5c") }
            key = leafKey
        } else if let fallbackKey {
            key = fallbackKey
        } else {
            throw Refusal(detail: "the JWS header has no x5c", part: "x5c")
        }
        // The signature (RFC 7515 §5.2) is over the first two parts as they were sent.
        let signingInput = Array(bytes[bytes.startIndex..<parts[1].endIndex])
        guard key.verify(signature: sig, message: signingInput, scheme: scheme) else {
            throw Refusal(detail: "the JWS signature does not verify", part: "signature")
        }
        self.header = header
        self.payload = payload
        self.chain = chain
    }

    /// The signature scheme of a JWS `alg` (RFC 7518 §3.1).
    static func scheme(_ alg: String) -> SignatureScheme? {
        switch alg {
        case "RS256": .rsaPKCS1(.sha256)
        case "RS384": .rsaPKCS1(.sha384)
        case "RS512": .rsaPKCS1(.sha512)
        case "PS256": .rsaPSS(.sha256)
        case "ES256": .ecdsa(.sha256)
        default: nil
        }
    }
}
