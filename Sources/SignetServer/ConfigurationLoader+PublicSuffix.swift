import Foundation
import Synchronization
import SignetAuth

/// `relying_party.public_suffix_list`: the Public Suffix List the RP ID is checked against.
extension ConfigurationLoader {
    /// Lists already read, by path and modification time: every configuration a process loads
    /// (each test's, the fuzzer's) would otherwise parse the same 10,000 rules again.
    static let suffixLists = Mutex<[String: (modified: Date?, list: PublicSuffixList)]>([:])

    /// The list `path` names; with no path, Debian's when it is installed, else `nil`. A list
    /// named but unreadable, over ``PublicSuffixList/maxBytes`` or without a rule is refused.
    static func publicSuffixList(_ path: String?) throws -> (list: PublicSuffixList, path: String)? {
        let setting = "relying_party.public_suffix_list"
        let attributes = try? FileManager.default.attributesOfItem(atPath: path ?? PublicSuffixList.debianPath)
        if path == nil, attributes == nil { return nil }
        let path = path ?? PublicSuffixList.debianPath
        let modified = attributes?[.modificationDate] as? Date
        if let kept = suffixLists.withLock({ $0[path] }), kept.modified == modified { return (kept.list, path) }
        let text = try ConfigurationError.readText(path, for: setting, limit: PublicSuffixList.maxBytes)
        guard let list = PublicSuffixList(text: text) else {
            throw ConfigurationError("\(setting) \(path) holds no rule: it must be the Public Suffix List (publicsuffix.org/list/public_suffix_list.dat), a rule a line")
        }
        suffixLists.withLock { $0[path] = (modified, list) }
        return (list, path)
    }

    /// Browsers refuse an RP ID the list names (`github.io`, `co.uk`): an origin under it can
    /// claim only its own registrable domain. The message names the one the first origin has.
    static func checkPublicSuffix(_ c: ServerConfiguration) throws {
        guard let (list, path) = c.publicSuffixList, list.lists(c.rpID) else { return }
        let hosts = c.webOrigins.compactMap { URLComponents(string: $0)?.host }
        let own = hosts.lazy.compactMap { list.registrableDomain(of: $0) }.first
        throw ConfigurationError("relying_party.id \"\(c.rpID)\" is a public suffix (listed in \(path)), which browsers refuse as an RP ID: "
            + (own.map { "use your own domain under it, \($0)" } ?? "use your own domain under it, such as yours.\(c.rpID)"))
    }
}
