import SignetAuth
import Foundation
import SignetCrypto
import SignetServer
import SignetWebAuthn
import Testing

/// The sealed auth session's layout (format 2), and sessions sealed by earlier versions (format 1).
@Suite struct SessionFormatTests {
    static func session(_ mask: Int, allowed: Int = 3) -> AuthSession {
        AuthSession(
            id: (0..<16).map { UInt8($0) }, kind: [.signUp, .signIn, .addPasskey, .stepUp][mask % 4], clientID: "app-é",
            challenge: (0..<32).map { UInt8(255 - $0) }, userID: mask & 1 != 0 ? "user-1" : nil, userHandle: mask & 2 != 0 ? [9, 8, 7] : nil,
            email: mask & 4 != 0 ? "zoë@signet.test" : nil, name: mask & 8 != 0 ? "" : nil,
            allowCredentials: (0..<allowed).map { Array(repeating: UInt8($0), count: 16 + $0) }, requireUserVerification: mask & 16 != 0,
            expiresAt: mask & 32 != 0 ? Int64.max : 1_764_000_000_123, beganBy: mask & 64 != 0 ? "AZrC-sid_1" : nil)
    }

    @Test("every combination of optional fields round-trips; every cut or lengthened layout is refused")
    func roundTrip() throws {
        for mask in 0..<128 {
            for allowed in [0, 1, AuthSession.maxAllowCredentials] {
                let s = Self.session(mask, allowed: allowed)
                let plain = try #require(SessionSealer.encode(s))
                #expect(SessionSealer.decode(plain) == s, "mask \(mask), \(allowed) allowed")
                if mask % 7 == 0 {
                    for cut in 0..<plain.count { #expect(SessionSealer.decode(Array(plain.prefix(cut))) == nil, "cut at \(cut)") }
                    #expect(SessionSealer.decode(plain + [0]) == nil)
                }
            }
        }
        // Unknown kinds and flags, and more allowed credentials than a session carries, are refused.
        var plain = try #require(SessionSealer.encode(Self.session(0)))
        plain[1] = UInt8(SessionSealer.kinds.count)
        #expect(SessionSealer.decode(plain) == nil)
        plain[1] = 0
        plain[2] = 64
        #expect(SessionSealer.decode(plain) == nil)
        // A session sealed before the beginning session was recorded (bit 5 clear) opens without it.
        let before = try #require(SessionSealer.encode(Self.session(1 | 2)))
        #expect(before[2] & 32 == 0 && SessionSealer.decode(before)?.beganBy == nil)
        // A field too long for its length prefix is not encoded.
        var huge = Self.session(0)
        huge.allowCredentials = [Array(repeating: 1, count: 70_000)]
        #expect(SessionSealer.encode(huge) == nil)
    }

    @Test("a session sealed as a CBOR map by an earlier version still opens, and sealed text opens to what was sealed")
    func formatOne() throws {
        let sealer = SessionSealer(kek: Array(repeating: 7, count: 32))
        let s = Self.session(1 | 4 | 16)
        let map = CBOR.map(CBORMap([
            (.int(1), .bytes(s.id)), (.int(2), .text(s.kind.rawValue)), (.int(3), .text(s.clientID)), (.int(4), .bytes(s.challenge)),
            (.int(9), .array(s.allowCredentials.map(CBOR.bytes))), (.int(10), .bool(s.requireUserVerification)), (.int(11), .int(Int(s.expiresAt))),
            (.int(5), .text(s.userID!)), (.int(7), .text(s.email!)),
        ]))
        let legacy = Base64URL.encode(try AESGCM.seal(CBOREncoder.encode(map), key: sealer.key, aad: SessionSealer.aad))
        #expect(sealer.open(legacy) == s)
        for mask in [0, 5, 31, 63, 64, 127] { #expect(sealer.open(try sealer.seal(Self.session(mask))) == Self.session(mask)) }
        // Another deployment's key, or one changed character: not a session.
        let other = SessionSealer(kek: Array(repeating: 8, count: 32))
        #expect(other.open(try sealer.seal(s)) == nil)
        var text = Array(try sealer.seal(s).utf8)
        text[10] = text[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(sealer.open(String(decoding: text, as: UTF8.self)) == nil)
    }
}
