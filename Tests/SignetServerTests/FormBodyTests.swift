import SignetAPI
import SignetAuth
import SignetServer
import SignetWebAuthn
import Testing

/// `application/x-www-form-urlencoded` bodies read into a JSON object: every pair kept in order,
/// a repeated name refused by name wherever it falls, however many pairs the body holds.
@Suite struct FormBodyTests {
    static func refusal(_ body: String) -> AuthError? {
        do {
            _ = try Wire.formToJSON(Array(body.utf8))
            return nil
        } catch {
            return error as? AuthError
        }
    }

    @Test("pairs become members in order; a value that is JSON is taken as JSON; percent-encoding decodes")
    func pairs() throws {
        let object = try #require(try Wire.formToJSON(Array("b=1&a=x%20y&authn_response=%7B%22id%22%3A%22k%22%7D&empty=&&c".utf8)).object)
        #expect(object.keys == ["b", "a", "authn_response", "empty", "c"])
        #expect(object["a"] == .string("x y") && object["empty"] == .string("") && object["c"] == .string(""))
        #expect(object["authn_response"] == .object(["id": .string("k")]))
    }

    @Test("a repeated name is refused, naming it, in a small form and at the end of one with thousands of pairs", arguments: [2, 16, 17, 6000])
    func repeated(_ count: Int) throws {
        let names = (0..<count).map { "f\($0)" }
        let plain = names.map { "\($0)=v" }.joined(separator: "&")
        #expect(try Wire.formToJSON(Array(plain.utf8)).object?.count == count)
        for (first, second) in [(0, count - 1), (count - 2, count - 1), (count / 2 - 1, count / 2)] where first != second && first >= 0 {
            var repeated = names
            repeated[second] = names[first]
            let refusal = Self.refusal(repeated.map { "\($0)=v" }.joined(separator: "&"))
            #expect(refusal?.reason == .malformed && refusal?.detail == "the form repeats \"\(names[first])\"", "\(count): \(first), \(second)")
        }
    }

    @Test("invalid percent-encoding is refused")
    func encoding() throws {
        #expect(Self.refusal("a=%zz")?.reason == .malformed)
        #expect(Self.refusal("a=%4")?.reason == .malformed)
        #expect(Self.refusal("%ff%fe=1")?.reason == .malformed)
        // Two hexadecimal digits exactly: no sign, no space (a number parser would take "+1" or "-0").
        for escape in ["%+1", "%-0", "% 1", "%1", "%"] {
            #expect(Self.refusal("a=" + escape)?.reason == .malformed, "\(escape)")
        }
        #expect(try Wire.formToJSON(Array("a=%2B1%2d%7e+".utf8)).object?["a"] == .string("+1-~ "))
    }
}
