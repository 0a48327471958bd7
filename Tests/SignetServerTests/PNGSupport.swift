/// A PNG made in the test, for branding's logo: 8-bit RGB, its pixels in stored (uncompressed)
/// deflate blocks, so that no image library is needed. PNG (ISO/IEC 15948) §5, §11.2; zlib
/// (RFC 1950) and deflate's stored blocks (RFC 1951 §3.2.4).
enum PNGSupport {
    static func png(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                let (r, g, b) = pixel(x, y)
                raw += [r, g, b]
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, raw.count - offset)
            let last: UInt8 = offset + n == raw.count ? 1 : 0
            zlib += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)] + raw[offset..<(offset + n)]
            offset += n
        } while offset < raw.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        zlib += bigEndian(b << 16 | a)
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// A logo: a rounded square in `color` and three grey bars where a name would be.
    static func logo(_ color: (UInt8, UInt8, UInt8)) -> [UInt8] {
        png(width: 160, height: 40) { x, y in
            let (dx, dy) = (Double(min(x, 39 - x)), Double(min(y, 39 - y)))
            if x < 40 { return dx < 6 && dy < 6 && (6 - dx) * (6 - dx) + (6 - dy) * (6 - dy) > 36 ? (255, 255, 255) : color }
            let bar = (y >= 8 && y < 16 && x >= 52 && x < 150) || (y >= 22 && y < 30 && x >= 52 && x < 120)
            return bar ? (0x3A, 0x3F, 0x46) : (255, 255, 255)
        }
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
}
