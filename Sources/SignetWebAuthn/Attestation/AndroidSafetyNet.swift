import SignetCrypto
import Foundation

extension AttestationContext {
    /// §8.5 Android SafetyNet (deprecated by Google, still produced by old devices).
    func verifyAndroidSafetyNet() throws(WebAuthnError) -> Outcome {
        let section = "8.5"
        guard let version = statement[text: "ver"]?.text, !version.isEmpty else { throw invalid("safetynet ver missing", section) }
        guard let response = statement[text: "response"]?.bytes, response.count <= 32 * 1024 else {
            throw invalid("safetynet response missing", section)
        }
        let parts = response.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(bytes: parts[0]),
              let payloadBytes = Base64URL.decode(bytes: parts[1]), let signature = Base64URL.decode(bytes: parts[2])
        else { throw invalid("safetynet response is not a compact JWS", section) }
        let json = StrictJSON(maxDepth: 8, maxLength: 32 * 1024)
        guard let header = try? json.parse(headerBytes), let payload = try? json.parse(payloadBytes) else {
            throw invalid("safetynet JWS header or payload is not JSON", section)
        }
        guard let x5c = header["x5c"]?.array, !x5c.isEmpty, x5c.count <= 8 else { throw invalid("safetynet JWS has no x5c", section) }
        var chain: [Certificate] = []
        for item in x5c {
            guard let text = item.string, let data = Data(base64Encoded: text), let cert = try? Certificate(der: [UInt8](data)) else {
                throw invalid("safetynet x5c entry is not a base64 DER certificate", section)
            }
            chain.append(cert)
        }
        // The JWS signature (RFC 7515 §5.2) verifies with the leaf's key.
        let signingInput = Array(response[response.startIndex..<parts[1].endIndex])
        let scheme: SignatureScheme
        var sig = signature
        switch header["alg"]?.string {
        case "RS256": scheme = .rsaPKCS1(.sha256)
        case "RS384": scheme = .rsaPKCS1(.sha384)
        case "RS512": scheme = .rsaPKCS1(.sha512)
        case "ES256":
            scheme = .ecdsa(.sha256)
            guard sig.count == 64, let der = ECDSASignature.der(fromRaw: sig) else { throw invalid("safetynet ES256 signature size", section) }
            sig = der
        default: throw invalid("safetynet JWS alg is not supported", section)
        }
        guard let leafKey = try? chain[0].publicKey(), leafKey.verify(signature: sig, message: signingInput, scheme: scheme) else {
            throw invalid("safetynet JWS signature does not verify", section)
        }
        // The leaf is issued to attest.android.com.
        guard Self.names(of: chain[0]).contains("attest.android.com") else {
            throw invalid("safetynet certificate is not issued to attest.android.com", section)
        }
        // nonce = base64(SHA-256(authenticatorData || clientDataHash)).
        guard let nonce = payload["nonce"]?.string, let nonceBytes = Data(base64Encoded: nonce),
              ConstantTime.equals([UInt8](nonceBytes), Digest.sha256.hash(signedData))
        else { throw invalid("safetynet nonce does not match", section) }
        // ctsProfileMatch, unless the policy waives it.
        if policy.safetyNetRequireCTSProfile && payload["ctsProfileMatch"]?.bool != true {
            throw invalid("safetynet ctsProfileMatch is not true", section)
        }
        // timestampMs is recent: not older than the policy allows, not in the future beyond skew.
        guard let timestamp = payload["timestampMs"]?.int64 else { throw invalid("safetynet timestampMs missing", section) }
        let age = now.timeIntervalSince1970 - Double(timestamp) / 1000
        guard age <= policy.safetyNetMaxAge, age >= -60 else {
            throw invalid("safetynet timestampMs is \(Int(age)) s from the verification time", section)
        }
        return Outcome(type: .basic, chain: chain)
    }

    /// DNS names of a certificate: subjectAltName dNSName entries, else the subject CN.
    static func names(of cert: Certificate) -> [String] {
        var names: [String] = []
        if let san = cert.extension("2.5.29.17") {
            var reader = DERReader(san.value)
            if let seq = try? reader.read(DERTag.sequence) {
                var items = seq.children
                while !items.isAtEnd, let item = try? items.read() {
                    if item.is(.contextSpecific, 2) { names.append(String(decoding: item.content, as: UTF8.self)) }
                }
            }
        }
        if names.isEmpty { names = cert.subject.filter { $0.oid == "2.5.4.3" }.map(\.value) }
        return names
    }
}
