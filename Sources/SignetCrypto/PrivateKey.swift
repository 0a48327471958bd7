internal import COpenSSL

/// A private signing key held by OpenSSL. Used for JWT signing, the software authenticator
/// and software device keys, and for building test certificates.
public final class PrivateKey: @unchecked Sendable {
    /// Key types that can be generated.
    public enum Kind: Sendable, Hashable {
        case ec(ECCurve)
        case edwards(EdwardsCurve)
        case rsa(bits: Int)
    }

    let pkey: OpaquePointer
    /// The ES256 signing context of this key, made on first use (``ContextTemplate``).
    let signTemplate = ContextTemplate()
    /// The key's `EC_KEY` signer for ES256, made on first use (``ECDSASigner``).
    let ecdsa = ECDSASignerSlot()
    /// The matching public key.
    public let publicKey: PublicKey

    init(owning pkey: OpaquePointer) throws {
        self.pkey = pkey
        // The public half shares no state with the private one: export and re-import it.
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &out)
        guard length > 0, let out else {
            EVP_PKEY_free(pkey)
            throw CryptoError(.library, "i2d_PUBKEY: \(openSSLError())")
        }
        defer { signet_openssl_free(out) }
        do {
            publicKey = try PublicKey(spki: Array(UnsafeBufferPointer(start: out, count: Int(length))))
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A fresh key from OpenSSL's CSPRNG.
    public static func generate(_ kind: Kind) throws -> PrivateKey {
        let typeName: String
        switch kind {
        case .ec: typeName = "EC"
        case .edwards(.ed25519): typeName = "ED25519"
        case .edwards(.ed448): typeName = "ED448"
        case .rsa: typeName = "RSA"
        }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, typeName, nil) else {
            throw CryptoError(.library, "EVP_PKEY_CTX_new_from_name(\(typeName))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw CryptoError(.library, openSSLError()) }
        switch kind {
        case .ec(let curve):
            guard EVP_PKEY_CTX_set_group_name(ctx, curve.groupName) == 1 else { throw CryptoError(.library, openSSLError()) }
        case .rsa(let bits):
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1 else { throw CryptoError(.library, openSSLError()) }
        case .edwards: break
        }
        var pkey: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else { throw CryptoError(.library, openSSLError()) }
        return try PrivateKey(owning: pkey)
    }

    /// A key from the DER that ``der`` produced (SEC 1, PKCS#1 or raw PKCS#8, detected).
    public convenience init(der: [UInt8]) throws {
        let pkey: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var p: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &p, buffer.count)
        }
        guard let pkey else { throw CryptoError(.invalidEncoding, "not a private key: \(openSSLError())") }
        try self.init(owning: pkey)
    }

    /// The private key as DER (`i2d_PrivateKey`). Secret: never log it.
    public var der: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PrivateKey(pkey, &out)
        guard length > 0, let out else { preconditionFailure("i2d_PrivateKey failed") }
        defer {
            OPENSSL_cleanse(out, Int(length))
            signet_openssl_free(out)
        }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// An ES256 signature as JWS carries it (RFC 7518 §3.4: `r || s`, 64 bytes), by the key's
    /// ``ECDSASigner``, or by `EVP_DigestSign` when that is turned off or refused.
    public func signES256(_ message: [UInt8]) throws -> [UInt8] {
        if ECDSASigner.direct || ECDSASigner.precompute, let signer = ecdsa.signer(pkey: pkey),
           let raw = ECDSASigner.precompute ? signer.signAhead(message) : signer.sign(message) {
            return raw
        }
        guard let raw = ECDSASignature.raw(fromDER: try sign(message, scheme: .ecdsa(.sha256)), width: 32) else {
            throw CryptoError(.library, "ECDSA signature conversion")
        }
        return raw
    }

    /// Signs `message` (`EVP_DigestSign`). ECDSA signatures are DER `Ecdsa-Sig-Value`.
    public func sign(_ message: [UInt8], scheme: SignatureScheme) throws -> [UInt8] {
        guard publicKey.supports(scheme) else { throw CryptoError(.unsupportedKey, "scheme does not fit the key") }
        // ES256 (every token Signet signs): a copy of the key's initialised context, into a
        // buffer of the largest DER signature, in one call.
        if case .ecdsa(let digest) = scheme, digest == .sha256, let template = signTemplate.context(pkey: pkey, md: digest.md, sign: true) {
            var length = Int(EVP_PKEY_get_size(pkey))
            var signature = [UInt8](repeating: 0, count: length)
            let rc = message.withUnsafeBufferPointer { m in
                signature.withUnsafeMutableBufferPointer { signet_template_sign(template, $0.baseAddress, &length, m.baseAddress, m.count) }
            }
            guard rc == 1 else { throw CryptoError(.library, "ES256 signing failed") }
            return Array(signature.prefix(length))
        }
        guard let ctx = EVP_MD_CTX_new() else { throw CryptoError(.library, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestSignInit(ctx, &pctx, scheme.digest?.md, nil, pkey) == 1 else {
            throw CryptoError(.library, openSSLError())
        }
        if case .rsaPSS = scheme {
            guard EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, signet_rsa_pss_saltlen_digest) == 1
            else { throw CryptoError(.library, openSSLError()) }
        }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(ctx, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw CryptoError(.library, openSSLError())
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard message.withUnsafeBufferPointer({ m in
            signature.withUnsafeMutableBufferPointer { EVP_DigestSign(ctx, $0.baseAddress, &length, m.baseAddress, m.count) }
        }) == 1 else { throw CryptoError(.library, openSSLError()) }
        return Array(signature.prefix(length))
    }
}
