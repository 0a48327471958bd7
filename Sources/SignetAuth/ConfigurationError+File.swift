import Foundation
import SignetCrypto

extension ConfigurationError {
    /// The bytes of the file a setting names, at most `limit` of them; otherwise an error that
    /// names the setting, the path and, for a file too large, the limit and `hint`.
    public static func read(_ path: String, for setting: String, limit: Int, hint: String = "") throws(ConfigurationError) -> [UInt8] {
        do {
            return try BoundedFile.read(path, limit: limit)
        } catch {
            throw ConfigurationError(error, path: path, setting: setting, limit: limit, hint: hint)
        }
    }

    /// The text of the file a setting names, as UTF-8, at most `limit` bytes.
    public static func readText(_ path: String, for setting: String, limit: Int) throws(ConfigurationError) -> String {
        do {
            return try BoundedFile.readText(path, limit: limit)
        } catch {
            throw ConfigurationError(error, path: path, setting: setting, limit: limit)
        }
    }

    init(_ failure: BoundedFile.Failure, path: String, setting: String, limit: Int, hint: String = "") {
        switch failure {
        case .unreadable: self.init("cannot read \(setting) \(path)")
        case .tooLarge: self.init("\(setting) \(path) is larger than \(BoundedFile.describe(limit))\(hint)")
        case .notText: self.init("\(setting) \(path) is not UTF-8 text")
        }
    }
}
