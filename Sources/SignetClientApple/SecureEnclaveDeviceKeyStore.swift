#if canImport(CryptoKit) && canImport(LocalAuthentication) && canImport(Security)
import CryptoKit
import Foundation
import LocalAuthentication
import Security
import SignetClient

/// A ``DeviceKeyStore`` on the Secure Enclave: a P-256 key generated inside it, usable only after
/// Face ID / Touch ID with the *current* biometric set (`.biometryCurrentSet`: re-enrolling a
/// finger or face invalidates it), never exportable. The opaque `dataRepresentation` that names
/// the key is kept in the Keychain, `WhenUnlockedThisDeviceOnly`.
@available(iOS 16.0, macOS 13.0, *)
public final class SecureEnclaveDeviceKeyStore: DeviceKeyStore, @unchecked Sendable {
    public let deviceID: String
    public let platform = "ios"
    private let item: KeychainItem

    /// - Parameters:
    ///   - deviceID: a stable identifier of this installation (e.g. a UUID kept in the Keychain).
    ///   - service: the Keychain service name for the key's blob.
    public init(deviceID: String, service: String = "signet.device-key") {
        self.deviceID = deviceID
        item = KeychainItem(service: service, account: "device-key", failure: .deviceKeyInvalidated, what: "device key")
    }

    public func createKey() async throws -> Data {
        guard SecureEnclave.isAvailable else { throw SignetError(.deviceKeyInvalidated, "this device has no Secure Enclave") }
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(
            nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, .biometryCurrentSet], &error)
        else { throw SignetError(.deviceKeyInvalidated, "cannot create access control: \(String(describing: error?.takeRetainedValue()))") }
        let key = try SecureEnclave.P256.Signing.PrivateKey(compactRepresentable: false, accessControl: access)
        try item.save(key.dataRepresentation)
        return key.publicKey.derRepresentation
    }

    public func hasKey() async -> Bool { ((try? item.load()) ?? nil) != nil }

    public func sign(_ challenge: Data, reason: String) async throws -> Data {
        guard let blob = try item.load() else { throw SignetError(.deviceKeyInvalidated, "no device key on this device") }
        let context = LAContext()
        context.localizedReason = reason
        let key: SecureEnclave.P256.Signing.PrivateKey
        do {
            key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob, authenticationContext: context)
        } catch {
            // The blob no longer names a usable key (biometric set changed, device restored).
            throw SignetError(.deviceKeyInvalidated, "the device key can no longer be used: \(error)")
        }
        do {
            return try key.signature(for: challenge).derRepresentation
        } catch let error as LAError where error.code == .userCancel || error.code == .appCancel || error.code == .systemCancel {
            throw SignetError(.canceled, "the user canceled the biometric check")
        } catch let error as LAError where error.code == .biometryNotEnrolled || error.code == .biometryNotAvailable {
            throw SignetError(.deviceKeyInvalidated, "biometry is not available: \(error.code.rawValue)")
        } catch {
            let status = (error as NSError).code
            if status == Int(errSecUserCanceled) { throw SignetError(.canceled, "the user canceled the biometric check") }
            throw SignetError(.deviceKeyInvalidated, "the device key failed to sign (\(status))")
        }
    }

    public func deleteKey() async throws { try item.delete() }

}
#endif
