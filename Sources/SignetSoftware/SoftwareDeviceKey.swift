import SignetCrypto

/// A software stand-in for a Secure Enclave / Android Keystore P-256 key: it signs challenges
/// exactly as `SecKeyCreateSignature(.ecdsaSignatureMessageX962SHA256)` and Android's
/// `SHA256withECDSA` do (DER ECDSA over SHA-256 of the bytes). For tests, the CLI and demos.
public final class SoftwareDeviceKey: @unchecked Sendable {
    let key: PrivateKey
    /// A stable identifier of the "device", as an app would send in `device_id`.
    public let deviceID: String

    public init(deviceID: String) throws {
        key = try PrivateKey.generate(.ec(.p256))
        self.deviceID = deviceID
    }

    public init(deviceID: String, privateKeyDER: [UInt8]) throws {
        key = try PrivateKey(der: privateKeyDER)
        self.deviceID = deviceID
    }

    /// DER private key, for state files; secret.
    public var privateKeyDER: [UInt8] { key.der }

    /// SubjectPublicKeyInfo DER, as CryptoKit's `derRepresentation` and Android's `getEncoded()` give it.
    public var publicKeySPKI: [UInt8] { key.publicKey.spki }

    /// `04 || X || Y`, as `SecKeyCopyExternalRepresentation` gives it.
    public var publicKeyX963: [UInt8] { key.publicKey.x963! }

    /// DER ECDSA P-256/SHA-256 signature over `challenge`.
    public func sign(_ challenge: [UInt8]) throws -> [UInt8] { try key.sign(challenge, scheme: .ecdsa(.sha256)) }
}
