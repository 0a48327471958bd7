import CQRencode

/// A QR code (ISO/IEC 18004) made by libqrencode, the only code that touches it: for the
/// terminal, where `signet authenticator device-signin` shows `verification_uri_complete`.
public struct QRCode: Sendable, Equatable {
    /// Modules per side.
    public let size: Int
    /// Row by row, `true` for a dark module.
    public let modules: [Bool]

    /// `text` as 8-bit data at error correction level M; `nil` if it does not fit a QR code.
    public init?(_ text: String) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        size = width
        modules = (0..<(width * width)).map { code.pointee.data[$0] & 1 == 1 }
    }

    public func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// Two rows of modules per line of text with half blocks, dark on light, inside a quiet zone
    /// of `margin` modules (the standard's is 4), so any terminal's width fits a URL's code.
    public func terminalText(margin: Int = 2) -> String {
        var lines: [String] = []
        for y in stride(from: -margin, to: size + margin, by: 2) {
            var line = ""
            for x in -margin..<(size + margin) {
                switch (isDark(x, y), isDark(x, y + 1)) {
                // Light modules are printed as ink (the block), dark ones as the background.
                case (false, false): line.append("█")
                case (false, true): line.append("▀")
                case (true, false): line.append("▄")
                case (true, true): line.append(" ")
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
