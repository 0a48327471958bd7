public import Foundation
import SignetAPI

/// Public-key pinning for apps whose threat model includes a mis-issued certificate: the
/// server's chain must contain a key whose SubjectPublicKeyInfo hashes (SHA-256, base64, as
/// HPKP's `pin-sha256` wrote them) to one of the pins. Pure: the Apple adapter's URLSession
/// delegate hands it the chain's keys.
///
/// A pin set needs at least two pins, one of them a backup key that no certificate uses yet:
/// rotate by issuing the new certificate for the backup key, shipping an app whose pins are that
/// key plus a new backup, and only then retiring the old key. A set of one pin would lock every
/// installed app out at the first key change.
public struct SPKIPinSet: Sendable, Equatable {
    public let pins: Set<String>

    public struct Invalid: Error, Sendable, Equatable {
        public let detail: String
    }

    /// - Parameter pins: base64 SHA-256 digests of SPKI DER (`openssl x509 -pubkey -noout |
    ///   openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`).
    public init(pins: [String]) throws(Invalid) {
        for pin in pins where Data(base64Encoded: pin)?.count != 32 {
            throw Invalid(detail: "\(pin.prefix(60)) is not a base64 SHA-256 digest")
        }
        let set = Set(pins)
        guard set.count >= 2 else { throw Invalid(detail: "a pin set needs at least two pins: the key in use and a backup key") }
        self.pins = set
    }

    /// Whether any key of the chain (leaf first, as SecTrust gives it) is pinned.
    public func matches(chain spkis: [Data]) -> Bool {
        spkis.contains { pins.contains(Self.pin(spki: $0)) }
    }

    /// The pin of one SPKI DER.
    public static func pin(spki: Data) -> String { SHA256.hash(spki).base64EncodedString() }

    /// The SPKI DER of a key as `SecKeyCopyExternalRepresentation` gives it: an uncompressed EC
    /// point (P-256 or P-384) or a PKCS #1 RSA public key; `nil` for anything else.
    public static func spki(externalRepresentation key: Data, isRSA: Bool) -> Data? {
        if isRSA {
            // SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING { 0, key } } (RFC 3279 §2.3.1)
            let algorithm = Data([0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00])
            let bits = Data([0x03]) + length(key.count + 1) + Data([0x00]) + key
            let body = algorithm + bits
            return Data([0x30]) + length(body.count) + body
        }
        switch key.count {
        case 65 where key.first == 0x04:
            return Data([0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
                         0x03, 0x42, 0x00]) + key
        case 97 where key.first == 0x04:
            return Data([0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22, 0x03, 0x62, 0x00])
                + key
        default:
            return nil
        }
    }

    /// A DER length (X.690 §8.1.3).
    static func length(_ n: Int) -> Data {
        if n < 0x80 { return Data([UInt8(n)]) }
        var bytes: [UInt8] = []
        var rest = n
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return Data([0x80 | UInt8(bytes.count)] + bytes)
    }
}
