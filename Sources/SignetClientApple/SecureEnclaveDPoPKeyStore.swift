#if canImport(CryptoKit) && canImport(Security)
import CryptoKit
import Foundation
import Security
import SignetClient

/// A ``DPoPKeyStore`` on the Secure Enclave: a P-256 key made inside it and never exportable,
/// *without* a biometric gate (`.privateKeyUsage` only), so every API call's proof is signed
/// without a prompt; the biometric gate stays on the device key (``SecureEnclaveDeviceKeyStore``),
/// which signs approvals and, for clients with `refresh_proof: "device_key"`, refreshes. The
/// key's opaque `dataRepresentation` is kept in the Keychain, `WhenUnlockedThisDeviceOnly`; the
/// key is made on first use.
@available(iOS 16.0, macOS 13.0, *)
public final class SecureEnclaveDPoPKeyStore: DPoPKeyStore, @unchecked Sendable {
    public let algorithm = "ES256"
    private let item: KeychainItem
    private let lock = NSLock()

    public init(service: String = "signet.dpop-key") {
        item = KeychainItem(service: service, account: "dpop-key", failure: .keychainFailed, what: "DPoP key")
    }

    public func publicJWK() async throws -> [JWKMember] {
        let point = try key().publicKey.x963Representation  // 04 || X || Y
        return [JWKMember("crv", "P-256"), JWKMember("kty", "EC"), JWKMember("x", point[1..<33].base64URLEncodedString),
                JWKMember("y", point[33..<65].base64URLEncodedString)]
    }

    public func sign(_ message: Data) async throws -> Data {
        try key().signature(for: message).derRepresentation
    }

    /// Forgets the key: the next token request binds the session to a new one.
    public func deleteKey() throws { try item.delete() }

    private func key() throws -> SecureEnclave.P256.Signing.PrivateKey {
        lock.lock()
        defer { lock.unlock() }
        if let blob = try item.load() { return try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob) }
        guard SecureEnclave.isAvailable else { throw SignetError(.keychainFailed, "this device has no Secure Enclave") }
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage], &error) else {
            throw SignetError(.keychainFailed, "cannot create access control: \(String(describing: error?.takeRetainedValue()))")
        }
        let key = try SecureEnclave.P256.Signing.PrivateKey(compactRepresentable: false, accessControl: access)
        try item.save(key.dataRepresentation)
        return key
    }

}
#endif
