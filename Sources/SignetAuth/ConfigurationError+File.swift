import Foundation
import SignetCrypto

extension ConfigurationError {
    /// The bytes of the file a setting names, at most `limit` of them; otherwise an error that
    /// names the setting, the path and, for a file too large, the limit.
    public static func read(_ path: String, for setting: String, limit: Int) throws(ConfigurationError) -> [UInt8] {
        do {
            return try BoundedFile.read(path, limit: limit)
        } catch .unreadable {
            throw ConfigurationError("cannot read \(setting) \(path)")
        } catch {
            throw ConfigurationError("\(setting) \(path) is larger than \(BoundedFile.describe(limit))")
        }
    }

    /// The text of the file a setting names, as UTF-8, at most `limit` bytes.
    public static func readText(_ path: String, for setting: String, limit: Int) throws(ConfigurationError) -> String {
        guard let text = String(validating: try read(path, for: setting, limit: limit), as: UTF8.self) else {
            throw ConfigurationError("\(setting) \(path) is not UTF-8 text")
        }
        return text
    }
}
