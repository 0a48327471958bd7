#if canImport(Security)
import Foundation
import Security
import SignetAPI
import SignetClient

/// One generic-password Keychain item (`kSecClassGenericPassword`, service and account),
/// `WhenUnlockedThisDeviceOnly`: the blobs and the session the Apple adapters keep.
struct KeychainItem: Sendable {
    let service: String
    let account: String
    /// What a failure is reported as (`.keychainFailed`, `.deviceKeyInvalidated`).
    let failure: Reason
    /// What the item holds, for the failure's message.
    let what: String

    var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    func load() throws -> Data? {
        var item = query
        item[kSecReturnData as String] = true
        item[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(item as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw SignetError(failure, "cannot read the \(what) (\(status))") }
        return data
    }

    /// Replaces the item's data, or adds the item.
    func save(_ data: Data) throws {
        let update: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            item.merge(update) { $1 }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw SignetError(failure, "cannot store the \(what) (\(status))") }
    }

    func delete() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw SignetError(failure, "cannot delete the \(what) (\(status))") }
    }
}
#endif
