import Foundation

/// The hosted pages' branding: the organization's logo and colours in place of Signet's. The
/// pages stay readable whatever is set: a colour is a hex sRGB value, never CSS text; a
/// button's text is black or white, whichever contrasts more with the colour behind it; a page
/// background that the pages' text cannot be read on is refused (WCAG 2.2 §1.4.3, 4.5:1).
public struct Branding: Sendable, Equatable {
    /// A logo served at `/assets/logo`: PNG, JPEG or WebP, told by its first bytes.
    public struct Logo: Sendable, Equatable {
        public var bytes: [UInt8]
        public var contentType: String
        public init(bytes: [UInt8], contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
        }
    }

    /// Buttons, the mark and, where it reads well on a card, links: `#rrggbb`.
    public var primaryColor: Color?
    /// The page behind the card in light mode: `#rrggbb`.
    public var pageBackground: Color?
    public var logo: Logo?
    public init(primaryColor: Color? = nil, pageBackground: Color? = nil, logo: Logo? = nil) {
        self.primaryColor = primaryColor
        self.pageBackground = pageBackground
        self.logo = logo
    }

    public var isEmpty: Bool { primaryColor == nil && pageBackground == nil && logo == nil }

    /// The stylesheet's own colours that branding is read against (`/assets/signet.css`).
    public static let lightCard = Color.white, darkCard = Color(red: 0x1F, green: 0x22, blue: 0x26)
    public static let lightText = Color(red: 0x1B, green: 0x1F, blue: 0x24), lightMuted = Color(red: 0x5B, green: 0x64, blue: 0x70)
    /// WCAG 2.2 §1.4.3's least contrast for text.
    public static let minimumContrast = 4.5

    /// The primary colour where links and focus rings on a light card can take it too.
    public var lightAccent: Color? { primaryColor.flatMap { $0.contrast(with: Self.lightCard) >= Self.minimumContrast ? $0 : nil } }
    /// The primary colour where links on a dark card can take it too.
    public var darkAccent: Color? { primaryColor.flatMap { $0.contrast(with: Self.darkCard) >= Self.minimumContrast ? $0 : nil } }

    /// `nil` when the pages' text and muted text read on `background`; otherwise why not.
    public static func unreadable(background: Color) -> String? {
        let text = background.contrast(with: lightText), muted = background.contrast(with: lightMuted)
        guard min(text, muted) < minimumContrast else { return nil }
        let ratio = { (r: Double) in String(format: "%.2f", r) }
        return "the pages' text would be \(ratio(text)):1 and their muted text \(ratio(muted)):1 on \(background), below 4.5:1 (WCAG 2.2 §1.4.3); choose a lighter colour"
    }

    /// The largest logo taken, in bytes.
    public static let logoLimit = 256 * 1024

    /// The type of an image by its signature, for the types every browser shows; `nil` for
    /// anything else. SVG is not among them: an SVG opened on its own runs its scripts, on the
    /// sign-in pages' origin.
    public static func imageType(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }
}

/// An sRGB colour, read only from `#rrggbb` (or `#rgb`) and written back the same way.
public struct Color: Sendable, Equatable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `#rrggbb` or `#rgb`, in either case; `nil` for anything else.
    public init?(hex text: String) {
        let digits = Array(text.utf8)
        guard digits.first == UInt8(ascii: "#"), digits.count == 7 || digits.count == 4 else { return nil }
        var values: [UInt8] = []
        for c in digits.dropFirst() {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): values.append(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): values.append(c - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        let channels = values.count == 6 ? stride(from: 0, to: 6, by: 2).map { values[$0] << 4 | values[$0 + 1] } : values.map { $0 << 4 | $0 }
        (red, green, blue) = (channels[0], channels[1], channels[2])
    }

    public var description: String {
        "#" + [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 255, green: 255, blue: 255)

    /// Relative luminance (WCAG 2.2, "relative luminance"): 0 for black, 1 for white.
    public var luminance: Double {
        func linear(_ channel: UInt8) -> Double {
            let c = Double(channel) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// The contrast ratio of two colours (WCAG 2.2, "contrast ratio"): 1 to 21.
    public func contrast(with other: Color) -> Double {
        let (a, b) = (luminance, other.luminance)
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    /// Black or white, whichever reads better on this colour: at least 4.58:1 for any colour.
    public var textOn: Color { contrast(with: .white) >= contrast(with: .black) ? .white : .black }
}

