#if canImport(Security)
import Foundation
import Security
import SignetClient

/// A ``TokenStore`` in the Keychain, `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`: never in
/// backups, never on another device. Keychain items outlive the app, so the first launch after a
/// reinstall (no flag in UserDefaults yet) clears what an earlier installation left.
public final class KeychainTokenStore: TokenStore, @unchecked Sendable {
    private let service: String
    private let account = "session"
    private let installedFlag: String

    public init(service: String = "signet.session", defaults: UserDefaults = .standard) {
        self.service = service
        installedFlag = service + ".installed"
        if !defaults.bool(forKey: installedFlag) {
            try? clear()
            defaults.set(true, forKey: installedFlag)
        }
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func save(_ session: StoredSession) throws {
        let data = try JSONEncoder().encode(session)
        let update = [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly] as [String: Any]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            item.merge(update) { $1 }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw SignetError(.keychainFailed, "cannot save the session (\(status))") }
    }

    public func load() throws -> StoredSession? {
        var item = query
        item[kSecReturnData as String] = true
        item[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(item as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw SignetError(.keychainFailed, "cannot read the session (\(status))")
        }
        return try JSONDecoder().decode(StoredSession.self, from: data)
    }

    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw SignetError(.keychainFailed, "cannot clear the session (\(status))")
        }
    }
}
#endif
