import SignetWebAuthn
import Testing

/// JSON objects as ordered members: lookups, edits, equality, and the parser's refusal of a
/// repeated name whether an object is small (names compared in pairs) or large (a set).
@Suite struct JSONObjectTests {
    static func text(_ names: [String]) -> [UInt8] {
        Array(("{" + names.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}").utf8)
    }

    @Test("a parsed object keeps its members' order and finds each by name")
    func order() throws {
        let names = (0..<40).map { "member\(($0 * 7) % 40)" }
        let object = try #require(try StrictJSON().parse(Self.text(names)).object)
        #expect(object.keys == names)
        #expect(object.count == 40 && !object.isEmpty)
        for (n, name) in names.enumerated() { #expect(object[name] == .number(String(n))) }
        #expect(object["member40"] == nil && object[""] == nil && object["Member0"] == nil)
        #expect(object.map(\.key) == names && object.values.count == 40)
    }

    @Test("a repeated name is refused wherever the two appear, in small and large objects", arguments: [2, 3, 16, 17, 64, 5000])
    func repeatedNames(_ count: Int) throws {
        let names = (0..<count).map { "n\($0)" }
        #expect(try StrictJSON().parse(Self.text(names)).object?.count == count)
        let pairs = count <= 17 ? (0..<count).flatMap { i in (i + 1..<count).map { (i, $0) } } : [(0, 1), (0, count - 1), (count / 2, count / 2 + 1), (count - 2, count - 1), (7, count / 3)]
        for (first, second) in pairs {
            var repeated = names
            repeated[second] = names[first]
            do {
                _ = try StrictJSON().parse(Self.text(repeated))
                Issue.record("\(count) members, \(first) and \(second) named alike: accepted")
            } catch {
                #expect(error.reason == .malformed && "\(error)".contains("duplicate key \"\(names[first])\""), "\(count): \(first), \(second): \(error)")
            }
        }
    }

    @Test("names that differ only in case, in escapes or by a trailing byte are distinct; an escaped repeat is not")
    func distinctNames() throws {
        let object = try #require(try StrictJSON().parse(Array(#"{"a":1,"A":2,"a ":3,"\u00e9":4,"é ":5}"#.utf8)).object)
        #expect(object.count == 5 && object["é"] == .number("4") && object["a"] == .number("1") && object["A"] == .number("2"))
        #expect(ParserTests.malformed { _ = try StrictJSON().parse(Array(#"{"é":1,"\u00e9":2}"#.utf8)) })
        #expect(ParserTests.malformed { _ = try StrictJSON().parse(Array(#"{"ab":1,"a\u0062":2}"#.utf8)) })
    }

    @Test("setting a member replaces it in place, adds a new one at the end, and nil removes it")
    func edits() {
        var object: JSONObject = ["a": .number("1"), "b": .number("2"), "c": .number("3")]
        object["b"] = .string("two")
        #expect(object.keys == ["a", "b", "c"] && object["b"] == .string("two"))
        object["d"] = .null
        #expect(object.keys == ["a", "b", "c", "d"] && object["d"] == .null)
        object["a"] = nil
        #expect(object.keys == ["b", "c", "d"] && object["a"] == nil)
        object["zz"] = nil
        #expect(object.count == 3)
        #expect(JSONObject(["y": .bool(true), "x": .bool(false)]).keys == ["x", "y"])
        #expect(JSONObject(uniqueKeysWithValues: [("q", JSONValue.null), ("p", .null)]).keys == ["q", "p"])
    }

    @Test("equality ignores the members' order, not their names, values or number")
    func equality() throws {
        let a: JSONObject = ["x": .number("1"), "y": .array([.string("s")])]
        #expect(a == ["y": .array([.string("s")]), "x": .number("1")])
        #expect(a != ["x": .number("1")])
        #expect(a != ["x": .number("1"), "y": .array([.string("t")])])
        #expect(a != ["x": .number("1"), "z": .array([.string("s")])])
        #expect(JSONValue.object(a) == (try StrictJSON().parse(Array(#"{"y":["s"],"x":1}"#.utf8))))
        #expect(JSONObject() == [:] && JSONObject().isEmpty)
        // Large objects too, where one side goes through a dictionary.
        let names = (0..<40).map { "k\($0)" }
        let forward = JSONObject(uniqueKeysWithValues: names.map { ($0, JSONValue.string($0)) })
        let backward = JSONObject(uniqueKeysWithValues: names.reversed().map { ($0, JSONValue.string($0)) })
        #expect(forward == backward)
        var changed = backward
        changed["k7"] = .null
        #expect(forward != changed && changed != forward)
        var renamed = backward
        renamed["k7"] = nil
        renamed["k40"] = .string("k7")
        #expect(forward != renamed)
    }
}
