import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetWeb

/// The branding's two files, made once at start: `/assets/brand.css` (the colours as the
/// stylesheet's variables) and `/assets/logo`. Each page names them with a version, the first
/// bytes of their SHA-256, so a browser caches them for a year and a change is seen at once.
struct BrandAssets: Sendable {
    let stylesheet: [UInt8]?
    let logo: Branding.Logo?
    /// What the layout links to: `/assets/brand.css?v=…` and `/assets/logo?v=…`.
    let stylesheetURL: String?
    let logoURL: String?

    init(_ branding: Branding) {
        let colours = branding.primaryColor != nil || branding.pageBackground != nil
        stylesheet = colours ? Array(Stylesheet.brand(
            primary: branding.primaryColor?.description, primaryText: branding.primaryColor?.textOn.description,
            accent: branding.lightAccent?.description, darkAccent: branding.darkAccent?.description,
            background: branding.pageBackground?.description).utf8) : nil
        logo = branding.logo
        stylesheetURL = stylesheet.map { "/assets/brand.css?v=" + Self.version($0) }
        logoURL = logo.map { "/assets/logo?v=" + Self.version($0.bytes) }
    }

    static func version(_ bytes: [UInt8]) -> String {
        Digest.sha256.hash(bytes).prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The file, cached for a year (its URL changes with it); 404 `not_found` where no branding
    /// sets it.
    static func response(_ body: [UInt8]?, type: String) throws -> HTTPResponse {
        guard let body else { throw AuthError.notFound(.notFound, "no branding sets this asset") }
        return HTTPResponse(status: 200, headers: [("Content-Type", type), ("Cache-Control", "public, max-age=31536000, immutable"),
                                                   ("X-Content-Type-Options", "nosniff"), ("Content-Security-Policy", "default-src 'none'")], body: body)
    }
}
