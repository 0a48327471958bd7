import SignetCrypto
import Testing

@Suite struct DERTests {
    @Test("writer and reader agree, high tag numbers included")
    func roundTrip() throws {
        let encoded = DER.sequence([DER.integer(-129), DER.integer(65535), DER.tagged(702, DER.integer(0)), DER.oid("1.3.6.1.4.1.11129.2.1.17")])
        var reader = DERReader(encoded)
        var seq = try reader.read(DERTag.sequence).children
        #expect(reader.isAtEnd)
        #expect(try seq.readInt() == -129)
        #expect(try seq.readInt() == 65535)
        let tagged = try seq.read()
        #expect(tagged.is(.contextSpecific, 702, constructed: true))
        var inner = tagged.children
        #expect(try inner.readInt() == 0)
        #expect(try DERReader.oidString(seq.read(DERTag.oid).content) == "1.3.6.1.4.1.11129.2.1.17")
        #expect(seq.isAtEnd)
    }

    @Test("non-minimal, truncated and indefinite encodings are refused", arguments: [
        [0x02, 0x02, 0x00, 0x01],  // integer with a redundant leading zero
        [0x02, 0x81, 0x01, 0x01],  // long-form length for a short value
        [0x30, 0x80, 0x00, 0x00],  // indefinite length
        [0x30, 0x05, 0x02, 0x01],  // contents beyond the input
        [0x02],  // no length
        [0x1f, 0x80, 0x01, 0x00],  // high tag number with a leading 0x80
        [0x02, 0x00],  // empty integer
    ] as [[UInt8]])
    func strict(_ bytes: [UInt8]) {
        #expect(throws: CryptoError.self) {
            var reader = DERReader(bytes)
            _ = try reader.readInt()
        }
    }
}
