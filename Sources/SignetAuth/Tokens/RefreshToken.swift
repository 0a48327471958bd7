import SignetCrypto

/// Refresh tokens (RFC 6749 §1.5, §10.4): opaque to clients, 48 bytes: 16 that name the token,
/// a millisecond time first like ``SignetService/timeOrderedID()``, then a 32-byte random secret.
/// The store keeps, as the token's key, the name and the first 16 bytes of the secret's SHA-256:
/// never the secret, and keys made later sort later, so a new token is added at the right edge of
/// the table's B-tree (one page that stays cached and is copied back once per checkpoint) instead
/// of in a random page. A lookup by the whole key checks the secret with it.
///
/// Tokens issued before this format (32 random bytes) are looked up, as they were stored, by
/// their whole SHA-256; a 32-byte SHA-256 cannot equal a key of this format but by a preimage.
package enum RefreshToken {
    static let nameSize = 16
    static let secretSize = 32

    /// The token and its key, from a time-ordered name and a random secret.
    static func make(name: [UInt8], secret: [UInt8]) -> (token: [UInt8], key: [UInt8]) {
        precondition(name.count == nameSize && secret.count == secretSize)
        let token = name + secret
        return (token, key(token)!)
    }

    /// The lowest key of a token made at `milliseconds` or later: keys below it are of tokens
    /// made before (or of the older format, whose first byte is below 2: until 2039 a key of this
    /// format starts with 1).
    package static func lowestKey(madeAt milliseconds: Int64) -> [UInt8] {
        let ms = UInt64(max(0, milliseconds))
        return (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + [UInt8](repeating: 0, count: 10)
    }

    /// The key under which `token` is stored, or `nil` for bytes of no format Signet issues.
    package static func key(_ token: [UInt8]) -> [UInt8]? {
        switch token.count {
        case nameSize + secretSize: Array(token[0..<nameSize]) + Digest.sha256.hash(token[nameSize...]).prefix(16)
        case secretSize: Digest.sha256.hash(token)
        default: nil
        }
    }
}
