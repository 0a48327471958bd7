#if canImport(Security)
import Foundation
import Security
import SignetClient

/// A ``TokenStore`` in the Keychain, `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`: never in
/// backups, never on another device. Keychain items outlive the app, so the first launch after a
/// reinstall (no flag in UserDefaults yet) clears what an earlier installation left.
public final class KeychainTokenStore: TokenStore, @unchecked Sendable {
    private let item: KeychainItem
    private let installedFlag: String

    public init(service: String = "signet.session", defaults: UserDefaults = .standard) {
        item = KeychainItem(service: service, account: "session", failure: .keychainFailed, what: "session")
        installedFlag = service + ".installed"
        if !defaults.bool(forKey: installedFlag) {
            try? clear()
            defaults.set(true, forKey: installedFlag)
        }
    }

    public func save(_ session: StoredSession) throws { try item.save(try JSONEncoder().encode(session)) }

    public func load() throws -> StoredSession? {
        guard let data = try item.load() else { return nil }
        return try JSONDecoder().decode(StoredSession.self, from: data)
    }

    public func clear() throws { try item.delete() }
}
#endif
