internal import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) for data at rest, such as signing keys under the
/// key-encryption key. Sealed form: 12-byte random nonce || ciphertext || 16-byte tag.
public enum AESGCM {
    public static let keyLength = 32

    /// The cipher, fetched from the provider once: `EVP_aes_256_gcm()` would be looked up by
    /// name on every initialization (OpenSSL 3 "implicit fetch").
    nonisolated(unsafe) private static let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)

    /// Encrypts and authenticates `plaintext`, binding `aad` (authenticated, not encrypted).
    public static func seal(_ plaintext: [UInt8], key: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
        guard key.count == keyLength else { throw CryptoError(.invalidEncoding, "AES-256-GCM key must be 32 bytes") }
        let nonce = SecureRandom.bytes(12)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError(.library, "EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        var total = 0
        guard EVP_EncryptInit_ex(ctx, cipher ?? EVP_aes_256_gcm(), nil, key, nonce) == 1 else { throw CryptoError(.library, openSSLError()) }
        if !aad.isEmpty {
            guard EVP_EncryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { throw CryptoError(.library, openSSLError()) }
        }
        guard out.withUnsafeMutableBufferPointer({ EVP_EncryptUpdate(ctx, $0.baseAddress, &length, plaintext, Int32(plaintext.count)) }) == 1 else {
            throw CryptoError(.library, openSSLError())
        }
        total = Int(length)
        guard out.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(ctx, $0.baseAddress! + total, &length) }) == 1 else {
            throw CryptoError(.library, openSSLError())
        }
        total += Int(length)
        var tag = [UInt8](repeating: 0, count: 16)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else { throw CryptoError(.library, openSSLError()) }
        return nonce + out.prefix(total) + tag
    }

    /// Decrypts what ``seal(_:key:aad:)`` produced; throws when anything was altered.
    public static func open(_ sealed: [UInt8], key: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
        guard key.count == keyLength else { throw CryptoError(.invalidEncoding, "AES-256-GCM key must be 32 bytes") }
        guard sealed.count >= 28 else { throw CryptoError(.invalidEncoding, "sealed data too short") }
        let nonce = Array(sealed.prefix(12)), body = Array(sealed[12..<(sealed.count - 16)]), tag = Array(sealed.suffix(16))
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError(.library, "EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: body.count + 16)
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(ctx, cipher ?? EVP_aes_256_gcm(), nil, key, nonce) == 1 else { throw CryptoError(.library, openSSLError()) }
        if !aad.isEmpty {
            guard EVP_DecryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { throw CryptoError(.library, openSSLError()) }
        }
        guard out.withUnsafeMutableBufferPointer({ EVP_DecryptUpdate(ctx, $0.baseAddress, &length, body, Int32(body.count)) }) == 1 else {
            throw CryptoError(.library, openSSLError())
        }
        let total = Int(length)
        var tagCopy = tag
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, &tagCopy) == 1,
              out.withUnsafeMutableBufferPointer({ EVP_DecryptFinal_ex(ctx, $0.baseAddress! + total, &length) }) == 1
        else {
            _ = openSSLError()
            throw CryptoError(.invalidEncoding, "sealed data failed authentication")
        }
        return Array(out.prefix(total + Int(length)))
    }
}
