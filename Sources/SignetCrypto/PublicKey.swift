internal import COpenSSL

/// A public key held by OpenSSL (`EVP_PKEY`). Immutable after creation and safe to share
/// between threads: every verification uses its own `EVP_MD_CTX`.
public final class PublicKey: @unchecked Sendable {
    /// The key family, as far as signature verification cares.
    public enum Kind: Sendable, Hashable {
        case ec(ECCurve)
        case edwards(EdwardsCurve)
        case rsa(bits: Int)
    }

    let pkey: OpaquePointer
    /// Family and size of the key.
    public let kind: Kind
    /// The ECDSA verification context of this key, made on first use (``ContextTemplate``).
    let verifyTemplate = ContextTemplate()
    /// The digest ``verifyTemplate`` was made for.
    private static let templateDigest = Digest.sha256

    init(owning pkey: OpaquePointer) throws {
        self.pkey = pkey
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pkey, signet_param_name_group(), &name, name.count, &length) == 1,
                  let curve = ECCurve.allCases.first(where: { $0.groupName == cString(name) })
            else {
                EVP_PKEY_free(pkey)
                throw CryptoError(.unsupportedKey, "EC key on an unsupported curve")
            }
            kind = .ec(curve)
        case EVP_PKEY_ED25519: kind = .edwards(.ed25519)
        case EVP_PKEY_ED448: kind = .edwards(.ed448)
        case EVP_PKEY_RSA: kind = .rsa(bits: Int(EVP_PKEY_get_bits(pkey)))
        default:
            EVP_PKEY_free(pkey)
            throw CryptoError(.unsupportedKey, "unsupported public key type")
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// An EC public key from its affine coordinates, as COSE EC2 keys carry them (RFC 9053 §7.1.1).
    /// The point must lie on the curve. Built with `EVP_PKEY_fromdata`, the fastest import.
    public convenience init(curve: ECCurve, x: [UInt8], y: [UInt8]) throws {
        guard x.count == curve.coordinateLength, y.count == curve.coordinateLength else {
            throw CryptoError(.invalidEncoding, "EC coordinate length does not match \(curve.rawValue)")
        }
        try self.init(curve: curve, x963: [0x04] + x + y)
    }

    /// An EC public key from an uncompressed SEC 1 / X9.63 point `04 || X || Y`.
    public convenience init(curve: ECCurve, x963 point: [UInt8]) throws {
        guard point.count == 1 + 2 * curve.coordinateLength, point.first == 0x04 else {
            throw CryptoError(.invalidEncoding, "not an uncompressed \(curve.rawValue) point")
        }
        let pkey: OpaquePointer = try curve.groupName.withCString { group in
            try point.withUnsafeBytes { raw in
                var params = [
                    OSSL_PARAM_construct_utf8_string(signet_param_name_group(), UnsafeMutablePointer(mutating: group), 0),
                    OSSL_PARAM_construct_octet_string(signet_param_name_pub(), UnsafeMutableRawPointer(mutating: raw.baseAddress), raw.count),
                    OSSL_PARAM_construct_end(),
                ]
                return try PublicKey.fromData(type: "EC", params: &params)
            }
        }
        try self.init(owning: pkey)
    }

    /// An Ed25519 or Ed448 public key from its raw encoding (RFC 8032 §5.1.5, §5.2.5).
    public convenience init(edwards curve: EdwardsCurve, raw: [UInt8]) throws {
        guard raw.count == curve.keyLength else {
            throw CryptoError(.invalidEncoding, "\(curve.rawValue) key must be \(curve.keyLength) bytes")
        }
        let type = curve == .ed25519 ? EVP_PKEY_ED25519 : EVP_PKEY_ED448
        guard let pkey = raw.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(type, nil, $0.baseAddress, $0.count) }) else {
            throw CryptoError(.invalidEncoding, "\(curve.rawValue) key rejected: \(openSSLError())")
        }
        try self.init(owning: pkey)
    }

    /// Smallest and largest RSA modulus accepted, in bits.
    public static let rsaBits = 2048...8192

    /// An RSA public key from its big-endian modulus and exponent (RFC 8230 §4).
    public convenience init(rsaModulus n: [UInt8], exponent e: [UInt8]) throws {
        let n = Array(n.drop(while: { $0 == 0 }))
        let e = Array(e.drop(while: { $0 == 0 }))
        guard PublicKey.rsaBits.contains(n.count * 8 - (n.first.map { $0.leadingZeroBitCount } ?? 8)),
              !e.isEmpty, e.count <= 8, (e.last ?? 0) & 1 == 1, e != [1]
        else { throw CryptoError(.invalidEncoding, "RSA modulus or exponent out of range") }
        guard let builder = OSSL_PARAM_BLD_new() else { throw CryptoError(.library, "OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let bnN = n.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let bnE = e.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer { BN_free(bnN); BN_free(bnE) }
        guard bnN != nil, bnE != nil,
              OSSL_PARAM_BLD_push_BN(builder, signet_param_name_rsa_n(), bnN) == 1,
              OSSL_PARAM_BLD_push_BN(builder, signet_param_name_rsa_e(), bnE) == 1,
              let params = OSSL_PARAM_BLD_to_param(builder)
        else { throw CryptoError(.library, "building RSA parameters: \(openSSLError())") }
        defer { OSSL_PARAM_free(params) }
        try self.init(owning: PublicKey.fromData(type: "RSA", params: params))
    }

    /// A key from a DER `SubjectPublicKeyInfo` (RFC 5280 §4.1.2.7). The whole input must be consumed.
    public convenience init(spki der: [UInt8]) throws {
        guard let pkey = parseWholeDER(der, { d2i_PUBKEY(nil, $0, $1) }, free: EVP_PKEY_free) else { throw CryptoError(.invalidEncoding, "not a SubjectPublicKeyInfo: \(openSSLError())") }
        try self.init(owning: pkey)
    }

    private static func fromData(type: String, params: UnsafeMutablePointer<OSSL_PARAM>) throws -> OpaquePointer {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError(.library, "EVP_PKEY_CTX_new_from_name(\(type))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, signet_evp_pkey_public_key, params) == 1,
              let pkey
        else { throw CryptoError(.invalidEncoding, "\(type) public key rejected: \(openSSLError())") }
        return pkey
    }

    /// The DER `SubjectPublicKeyInfo` of this key.
    public var spki: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &out)
        guard length > 0, let out else { preconditionFailure("i2d_PUBKEY failed") }
        defer { signet_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The uncompressed point `04 || X || Y` of an EC key, `nil` for other keys.
    public var x963: [UInt8]? {
        guard case .ec = kind else { return nil }
        var out = [UInt8](repeating: 0, count: 133)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, signet_param_name_pub(), &out, out.count, &length) == 1 else { return nil }
        return Array(out.prefix(length))
    }

    /// The raw public key of an Edwards key, `nil` for other keys.
    public var rawEdwards: [UInt8]? {
        guard case .edwards(let curve) = kind else { return nil }
        var out = [UInt8](repeating: 0, count: curve.keyLength)
        var length = out.count
        guard EVP_PKEY_get_raw_public_key(pkey, &out, &length) == 1 else { return nil }
        return out
    }

    /// Big-endian modulus and exponent of an RSA key, `nil` for other keys.
    public var rsaComponents: (n: [UInt8], e: [UInt8])? {
        guard case .rsa = kind else { return nil }
        func component(_ name: UnsafePointer<CChar>) -> [UInt8]? {
            var bn: OpaquePointer?
            guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { return nil }
            defer { BN_free(bn) }
            var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
            _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
            return out
        }
        guard let n = component(signet_param_name_rsa_n()), let e = component(signet_param_name_rsa_e()) else { return nil }
        return (n, e)
    }

    /// `true` when both objects hold the same public key.
    public func isSameKey(as other: PublicKey) -> Bool { EVP_PKEY_eq(pkey, other.pkey) == 1 }

    /// Whether `scheme` can be used with this key at all.
    public func supports(_ scheme: SignatureScheme) -> Bool {
        switch (kind, scheme) {
        case (.ec, .ecdsa), (.edwards, .eddsa), (.rsa, .rsaPKCS1), (.rsa, .rsaPSS): true
        default: false
        }
    }

    /// Verifies `signature` over `message` (`EVP_DigestVerify`). A key of the wrong family for
    /// `scheme` never verifies.
    public func verify(signature: [UInt8], message: [UInt8], scheme: SignatureScheme) -> Bool {
        guard supports(scheme), !signature.isEmpty else { return false }
        // ES256, the sign-in's verification: a copy of the key's initialised context.
        if case .ecdsa(let digest) = scheme, digest == Self.templateDigest,
           let template = verifyTemplate.context(pkey: pkey, md: digest.md, sign: false) {
            return signature.withUnsafeBufferPointer { s in
                message.withUnsafeBufferPointer { m in signet_template_verify(template, s.baseAddress, s.count, m.baseAddress, m.count) == 1 }
            }
        }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit(ctx, &pctx, scheme.digest?.md, nil, pkey) == 1 else {
            _ = signet_err_get_and_clear()
            return false
        }
        if case .rsaPSS = scheme {
            guard EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, signet_rsa_pss_saltlen_digest) == 1
            else {
                _ = signet_err_get_and_clear()
                return false
            }
        }
        let rc = signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                EVP_DigestVerify(ctx, s.baseAddress, s.count, m.baseAddress, m.count)
            }
        }
        if rc != 1 { _ = signet_err_get_and_clear() }
        return rc == 1
    }
}

extension PublicKey {
    /// Runs `iterations` verifications in a C loop straight over `EVP_DigestVerify` and returns
    /// how many succeeded: the floor that benchmarks compare Signet's verification with.
    public func benchmarkRawVerify(signature: [UInt8], message: [UInt8], scheme: SignatureScheme, iterations: Int) -> Int {
        signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                Int(signet_bench_digest_verify(pkey, scheme.digest?.md, s.baseAddress, s.count, m.baseAddress, m.count, iterations))
            }
        }
    }

    /// The same floor with the context initialised once and copied per call (as ``verify`` does
    /// for ES256): the floor the other way.
    public func benchmarkTemplateVerify(signature: [UInt8], message: [UInt8], scheme: SignatureScheme, iterations: Int) -> Int {
        signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                Int(signet_bench_template_verify(pkey, scheme.digest?.md, s.baseAddress, s.count, m.baseAddress, m.count, iterations))
            }
        }
    }
}

/// The last OpenSSL error on this thread as text; clears the thread's error queue.
func openSSLError() -> String {
    let code = signet_err_get_and_clear()
    guard code != 0 else { return "no detail" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    return cString(buffer)
}

/// A Swift string from a NUL-terminated C buffer.
func cString(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
