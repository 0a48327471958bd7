import SignetQR
import Testing

/// The terminal's QR code of `verification_uri_complete` (libqrencode, ISO/IEC 18004).
@Suite struct QRCodeTests {
    @Test("a link becomes a QR code with its three finder patterns, printed two rows per line inside a quiet zone")
    func finderPatterns() throws {
        let code = try #require(QRCode("https://auth.example.com/device?user_code=BCDF-GHJK"))
        // Version 3 or 4 at level M for 50 bytes: 29 or 33 modules; always 17 + 4 × version.
        #expect((code.size - 17) % 4 == 0 && code.size >= 29 && code.size <= 33)
        // A finder pattern: a dark 7×7 ring, a light ring inside it, a dark 3×3 centre.
        for (ox, oy) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            for i in 0..<7 {
                #expect(code.isDark(ox + i, oy) && code.isDark(ox + i, oy + 6) && code.isDark(ox, oy + i) && code.isDark(ox + 6, oy + i))
            }
            #expect(!code.isDark(ox + 1, oy + 1) && code.isDark(ox + 3, oy + 3) && code.isDark(ox + 2, oy + 4))
        }
        let text = code.terminalText(margin: 2)
        let lines = text.split(separator: "\n")
        #expect(lines.count == (code.size + 4 + 1) / 2 && lines.allSatisfy { $0.count == code.size + 4 })
        // The quiet zone is light: full blocks around the code.
        #expect(lines.first?.allSatisfy { $0 == "█" } == true)
        #expect(QRCode(String(repeating: "x", count: 5000)) == nil)
    }
}
