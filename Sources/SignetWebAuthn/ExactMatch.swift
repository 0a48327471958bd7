/// Byte-for-byte string matching. Swift's `==`, `contains` and `Set` compare Strings by
/// canonical equivalence (Unicode Standard Annex #15), under which U+212A KELVIN SIGN equals
/// "K", U+037E GREEK QUESTION MARK equals ";" and U+1FEF GREEK VARIA equals "`". A redirect URI
/// (RFC 6749 §3.1.2.3: RFC 3986 §6.2.1's simple string comparison), an origin (WebAuthn
/// §13.4.9) and an audience are matched exactly: a value that is only equivalent would travel
/// on, to a browser or a resource server that reads its bytes, as a different URI.
extension String {
    /// Whether the two strings have the same UTF-8 bytes.
    @inlinable
    public func isExactly(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension Sequence where Element == String {
    /// Whether an element has `value`'s UTF-8 bytes.
    @inlinable
    public func containsExactly(_ value: String) -> Bool { contains { $0.isExactly(value) } }
}

extension Set where Element == String {
    /// Whether the set holds `value`'s UTF-8 bytes: the hashed lookup, then the bytes of the one
    /// element it finds (a set never holds two equivalent strings).
    @inlinable
    public func containsExactly(_ value: String) -> Bool {
        guard let index = firstIndex(of: value) else { return false }
        return self[index].isExactly(value)
    }
}
