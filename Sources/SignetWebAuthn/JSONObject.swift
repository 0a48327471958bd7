/// A JSON object (RFC 8259 §4): its members in the order they were read or added, each name once.
///
/// The objects Signet reads and writes have a handful of members, so a lookup compares names in
/// turn instead of hashing them: a short name compares as two machine words, where hashing a
/// `String` for a `Dictionary` runs SipHash over it. A sign-in's bodies, client data and tokens
/// make about 30 lookups in ten objects; as dictionaries they cost 19.4k more instructions a
/// sign-in (`scripts/bench-callgrind.sh`, medians of three). Equality does not depend on the
/// members' order.
public struct JSONObject: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    private var members: [Element]

    public init() { members = [] }

    /// A name that appears twice among the members given to ``init(members:)``.
    public struct RepeatedName: Error, Sendable {
        public let name: String
    }

    /// Members read from input, checked once for a repeated name (the first one that appears a
    /// second time is thrown). Build a large object this way, not member by member through the
    /// subscript, which searches the members each time.
    public init(members: [Element]) throws(RepeatedName) {
        if let name = JSONObject.firstRepeatedName(members) { throw RepeatedName(name: name) }
        self.members = members
    }

    /// Traps on a repeated name, as a `Dictionary` literal does.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniqueKeysWithValues: elements)
    }

    /// Traps on a repeated name, as `Dictionary(uniqueKeysWithValues:)` does.
    public init(uniqueKeysWithValues elements: some Sequence<(String, JSONValue)>) {
        do {
            try self.init(members: elements.map { (key: $0.0, value: $0.1) })
        } catch {
            preconditionFailure("JSONObject: the name \"\(error.name)\" appears twice")
        }
    }

    /// A dictionary's members, sorted by name (a dictionary has no order of its own).
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The names, in order.
    public var keys: [String] { members.map(\.key) }
    /// The values, in the order of their names.
    public var values: [JSONValue] { members.map(\.value) }

    /// The member named `key`; setting `nil` removes it, setting a new name appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[Element]> { members.makeIterator() }

    /// Linear in the members: large objects are compared through a dictionary of one side.
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.count == b.count else { return false }
        if a.count <= 16 { return a.members.allSatisfy { member in b[member.key] == member.value } }
        let other = Dictionary(b.members.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return a.members.allSatisfy { member in other[member.key] == member.value }
    }

    /// The first name that appears a second time, if any. Few names are compared in pairs; many
    /// go through a set, so a body with thousands of members costs linear time, not quadratic.
    private static func firstRepeatedName(_ members: [Element]) -> String? {
        if members.count <= 16 {
            for i in members.indices.dropFirst() {
                let name = members[i].key
                if members[..<i].contains(where: { $0.key == name }) { return name }
            }
            return nil
        }
        var seen = Set<String>(minimumCapacity: members.count)
        return members.first { !seen.insert($0.key).inserted }?.key
    }
}
