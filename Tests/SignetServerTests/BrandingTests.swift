import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing
import SignetTestSupport

/// `branding`: the hosted pages' logo and colours, checked when the configuration loads and
/// served as two versioned assets.
@Suite struct BrandingTests {
    static let base = #""relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]"#

    static func load(_ branding: String, environment: [String: String] = [:]) throws -> ServerConfiguration {
        try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base), \"branding\": {\(branding)}}"), environment: environment)
    }

    static func file(_ bytes: [UInt8]) throws -> String {
        let path = Scratch.directory.appendingPathComponent("signet-logo-\(UUID())").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("colours: #rrggbb and #rgb in either case, nothing else; contrast ratios as WCAG 2.2 computes them; button text black or white, whichever reads")
    func colours() {
        #expect(Color(hex: "#0A7d5a") == Color(red: 0x0A, green: 0x7D, blue: 0x5A) && Color(hex: "#fa0")?.description == "#ffaa00")
        for bad in ["0a7d5a", "#0a7d5", "#0a7d5aa", "#0a7d5g", "red", "#", "", "#12345\u{0}", "#abc;}", "＃abc", "#٠٠٠"] {
            #expect(Color(hex: bad) == nil, "\(bad)")
        }
        #expect(abs(Color.white.contrast(with: .black) - 21) < 0.001)
        #expect(abs(Color.white.contrast(with: .white) - 1) < 0.001)
        // #777777 on white is just under AA (4.48:1); #767676 just over (4.54:1).
        #expect(Color(hex: "#777777")!.contrast(with: .white) < 4.5 && Color(hex: "#767676")!.contrast(with: .white) >= 4.5)
        #expect(Color(hex: "#0a7d5a")!.textOn == .white && Color(hex: "#ffd54f")!.textOn == .black)
        for hex in ["#777777", "#0a7d5a", "#ffd54f", "#ff0000", "#00ff00", "#0000ff", "#808080"] {
            let c = Color(hex: hex)!
            #expect(c.contrast(with: c.textOn) >= 4.5, "\(hex)")
        }
    }

    @Test("the configuration: colours and a PNG, JPEG or WebP logo load, from the file or the environment")
    func loads() throws {
        let png = PNGSupport.logo((10, 125, 90))
        let c = try Self.load(##""primary_color": "#0a7d5a", "page_background": "#f7f3ea", "logo_file": "\##(try Self.file(png))""##)
        #expect(c.branding.primaryColor == Color(hex: "#0a7d5a") && c.branding.pageBackground == Color(hex: "#f7f3ea"))
        #expect(c.branding.logo == Branding.Logo(bytes: png, contentType: "image/png"))
        let jpeg = try Self.load(#""logo_file": "\#(try Self.file([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 100)))""#)
        #expect(jpeg.branding.logo?.contentType == "image/jpeg")
        let webp = try Self.load(#""logo_file": "\#(try Self.file(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)))""#)
        #expect(webp.branding.logo?.contentType == "image/webp")
        let environment = try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(Self.base)}"), environment: ["SIGNET_BRANDING_PRIMARY_COLOR": "#123"])
        #expect(environment.branding.primaryColor == Color(hex: "#112233") && environment.branding.logo == nil)
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(Self.base)}"), environment: [:]).branding.isEmpty)
    }

    @Test("refused, each saying what to fix: a colour that is not one, a background the text cannot be read on, an SVG or other file, a logo too large, no file")
    func refused() throws {
        let svg = try Self.file(Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8))
        let large = try Self.file([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: Branding.logoLimit))
        let cases: [(String, String)] = [
            (#""primary_color": "green""#, "branding.primary_color must be a colour such as #0a7d5a"),
            (##""primary_color": "#0a7d5a; } body { display: none""##, "branding.primary_color must be a colour"),
            (#""primary_color": 12"#, "branding.primary_color"),
            (##""page_background": "#333333""##, "below 4.5:1"),
            (##""page_background": "#9aa0a6""##, "muted text"),
            (#""logo_file": "\#(svg)""#, "SVG is not taken"),
            (#""logo_file": "\#(large)""#, "larger than 256 KiB"),
            (#""logo_file": "/nonexistent/logo.png""#, "cannot read branding.logo_file"),
            (#""logo": "x.png""#, "unknown setting"),
        ]
        for (branding, message) in cases {
            do {
                _ = try Self.load(branding)
                Issue.record("accepted: \(branding)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains(message), "\(branding): \(error.message)")
            }
        }
    }

    @Test("the pages link the brand stylesheet and show the logo, each by a versioned URL served for a year; without branding, neither")
    func served() throws {
        let png = PNGSupport.logo((10, 125, 90))
        let server = try TestServer { c in
            TestServer.webClients(&c)
            c.branding = Branding(primaryColor: Color(hex: "#0a7d5a"), pageBackground: Color(hex: "#f7f3ea"), logo: .init(bytes: png, contentType: "image/png"))
        }
        let html = try WebBrowser(server).page("/login").html
        let css = try #require(html.firstMatch(of: /href="(\/assets\/brand\.css\?v=[0-9a-f]{16})"/)?.1)
        let logo = try #require(html.firstMatch(of: /<img class="logo" src="(\/assets\/logo\?v=[0-9a-f]{16})" alt="Signet Test"/)?.1)
        #expect(!html.contains("class=\"mark\""))

        let sheet = try server.get(String(css))
        let text = String(decoding: sheet.body, as: UTF8.self)
        #expect(sheet.status == 200 && sheet.headers["content-type"] == "text/css; charset=utf-8" && sheet.headers["cache-control"]?.contains("immutable") == true)
        #expect(text.contains("--brand: #0a7d5a;") && text.contains("--brand-fg: #ffffff;"))
        // Links take the colour on a light card (5.2:1), not on a dark one (2.9:1); the dark page keeps its background.
        #expect(text.contains("@media (prefers-color-scheme: light) { :root { --accent: #0a7d5a; --bg: #f7f3ea; } }"))
        #expect(!text.contains("prefers-color-scheme: dark"))
        let image = try server.get(String(logo))
        #expect(image.status == 200 && image.body == png && image.headers["content-type"] == "image/png")
        #expect(image.headers["x-content-type-options"] == "nosniff" && image.headers["content-security-policy"] == "default-src 'none'")

        // A light primary colour: dark button text, and links left to Signet's own colour on a light card.
        let light = try TestServer { c in
            TestServer.webClients(&c)
            c.branding.primaryColor = Color(hex: "#ffd54f")
        }
        let lightHTML = try WebBrowser(light).page("/login").html
        let lightCSS = String(decoding: try light.get(String(try #require(lightHTML.firstMatch(of: /href="(\/assets\/brand\.css\?v=[0-9a-f]+)"/)?.1))).body, as: UTF8.self)
        #expect(lightCSS.contains("--brand-fg: #000000;") && !lightCSS.contains("prefers-color-scheme: light") && lightCSS.contains("prefers-color-scheme: dark"))
        #expect(lightHTML.contains("class=\"mark\"") && !lightHTML.contains("/assets/logo"))

        let plain = try TestServer { c in TestServer.webClients(&c) }
        let plainHTML = try WebBrowser(plain).page("/login").html
        #expect(!plainHTML.contains("brand.css") && !plainHTML.contains("/assets/logo") && plainHTML.contains("class=\"mark\""))
        for asset in ["/assets/brand.css", "/assets/logo"] {
            let missing = try plain.get(asset)
            #expect(missing.status == 404 && (try? StrictJSON().parse(missing.body))?["reason"] == .string("not_found"), "\(asset)")
        }
    }
}
