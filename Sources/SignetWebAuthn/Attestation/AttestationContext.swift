import SignetCrypto
import Foundation

/// Everything an attestation statement format verifies against (WebAuthn L3 §8).
struct AttestationContext {
    let authData: AuthenticatorData
    let clientDataHash: [UInt8]
    let credentialKey: COSEKey
    let statement: CBORMap
    let now: Date
    let policy: RelyingParty

    /// What a format's verification procedure yields: the attestation type and trust path.
    struct Outcome {
        let type: AttestationType
        let chain: [Certificate]
    }

    /// `authenticatorData || clientDataHash`, what most formats sign.
    var signedData: [UInt8] { authData.raw + clientDataHash }

    var aaguid: [UInt8] { authData.attestedCredential?.aaguid ?? [] }

    /// Step 21: match `fmt` (case-sensitive) against the supported formats, then run its procedure.
    func verify(format: String) throws(WebAuthnError) -> Outcome {
        switch format {
        case "none": return try verifyNone()
        case "packed": return try verifyPacked()
        case "fido-u2f": return try verifyFIDOU2F()
        case "apple": return try verifyApple()
        case "android-key": return try verifyAndroidKey()
        case "android-safetynet": return try verifyAndroidSafetyNet()
        case "tpm": return try verifyTPM()
        default: throw WebAuthnError(.attestationInvalid, "unsupported attestation format \"\(format)\"", step: "7.1 step 21")
        }
    }

    func invalid(_ detail: String, _ section: String) -> WebAuthnError {
        WebAuthnError(.attestationInvalid, detail, step: section)
    }

    /// The `x5c` array as certificates, leaf first (1 to 8 of them).
    func certificates(_ section: String, key: String = "x5c") throws(WebAuthnError) -> [Certificate] {
        guard let items = statement[text: key]?.array, !items.isEmpty, items.count <= 8 else {
            throw invalid("\(key) must be an array of 1 to 8 certificates", section)
        }
        var result: [Certificate] = []
        for item in items {
            guard let der = item.bytes, let cert = try? Certificate(der: der) else {
                throw invalid("\(key) holds something that is not a DER certificate", section)
            }
            result.append(cert)
        }
        return result
    }

    /// The statement's `alg`, which must be a known algorithm.
    func algorithm(_ section: String) throws(WebAuthnError) -> COSEAlgorithm {
        guard let value = statement[text: "alg"]?.int, COSEAlgorithm(rawValue: value).scheme != nil else {
            throw invalid("attStmt alg missing or unknown", section)
        }
        return COSEAlgorithm(rawValue: value)
    }

    /// The statement's `sig`.
    func signature(_ section: String, key: String = "sig") throws(WebAuthnError) -> [UInt8] {
        guard let sig = statement[text: key]?.bytes, !sig.isEmpty else { throw invalid("attStmt \(key) missing", section) }
        return sig
    }

    /// Verifies `sig` over `message` with a certificate's key and `alg`.
    func verify(_ sig: [UInt8], over message: [UInt8], by cert: Certificate, alg: COSEAlgorithm, _ section: String) throws(WebAuthnError) {
        guard let scheme = alg.scheme, let key = try? cert.publicKey(), key.verify(signature: sig, message: message, scheme: scheme) else {
            throw invalid("attestation signature does not verify with the certificate key", section)
        }
    }

    /// The id-fido-gen-ce-aaguid extension, when present, must equal the AAGUID and not be critical
    /// (§8.2.1, §8.3.1).
    func checkAAGUIDExtension(_ cert: Certificate, _ section: String) throws(WebAuthnError) {
        guard let ext = cert.extension("1.3.6.1.4.1.45724.1.1.4") else { return }
        var reader = DERReader(ext.value)
        guard !ext.critical, let octets = try? reader.read(DERTag.octetString), reader.isAtEnd else {
            throw invalid("id-fido-gen-ce-aaguid extension is critical or malformed", section)
        }
        guard Array(octets.content) == aaguid else {
            throw invalid("id-fido-gen-ce-aaguid extension does not match the AAGUID", section)
        }
    }

    /// The credential public key must be the certificate's subject public key.
    func checkCredentialKey(matches cert: Certificate, _ section: String) throws(WebAuthnError) {
        guard let key = try? cert.publicKey(), key.isSameKey(as: credentialKey.publicKey) else {
            throw invalid("credential public key differs from the attestation certificate's key", section)
        }
    }
}
