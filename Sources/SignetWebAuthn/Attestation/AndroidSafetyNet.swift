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
        let jws: CertifiedJWS
        do {
            jws = try CertifiedJWS(response, json: StrictJSON(maxDepth: 8, maxLength: 32 * 1024), maxCertificates: 8,
                                   algorithms: ["RS256", "RS384", "RS512", "ES256"])
        } catch {
            throw invalid("safetynet response: \(error.detail)", section)
        }
        let chain = jws.chain, payload = jws.payload
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
