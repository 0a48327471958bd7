import Foundation
import SignetWebAuthn
import SignetAuth

extension ConfigurationLoader {
    /// `passwordless.*`, `email.*` and `recovery.*` (DESIGN.md, "Email codes, recovery codes and recovery").
    static func buildEmail(_ tree: JSONObject, _ c: inout ServerConfiguration) throws {
        if let v = try int(tree, ["passwordless", "code_length"], range: 6...10) { c.passwordless.codeLength = v }
        if let v = try int(tree, ["passwordless", "code_ttl"], range: 30...3600) { c.passwordless.codeTTL = v }
        if let v = try int(tree, ["passwordless", "max_attempts"], range: 1...20) { c.passwordless.maxAttempts = v }
        if let v = try flag(tree, ["passwordless", "signup"]) { c.passwordless.signup = v }
        if let v = try int(tree, ["passwordless", "send_interval"], range: 1...3600) { c.passwordless.sendInterval = v }
        if let v = try int(tree, ["passwordless", "sends_per_hour"], range: 1...1000) { c.passwordless.sendsPerHour = v }
        if let v = try string(tree, ["email", "smtp_url"]) {
            guard let url = URLComponents(string: v), let scheme = url.scheme?.lowercased(), ["smtp", "smtps"].contains(scheme), url.host?.isEmpty == false,
                  url.user == nil, url.password == nil
            else {
                throw ConfigurationError("email.smtp_url must be smtp://HOST:587 (STARTTLS) or smtps://HOST:465, without credentials (got \"\(v)\"); the user goes in email.username, the password in SIGNET_EMAIL_PASSWORD or email.password_file")
            }
            c.email.smtpURL = v
        }
        if let v = try string(tree, ["email", "from"]) {
            guard (try? Ceremonies.emailAddress(v, member: "email.from")) != nil else { throw ConfigurationError("email.from must be an email address (got \"\(v)\")") }
            c.email.from = v
        }
        if let v = try string(tree, ["email", "username"]) { c.email.username = v }
        if let v = try string(tree, ["email", "password_file"]) {
            c.email.password = try ConfigurationError.readText(v, for: "email.password_file", limit: maxSecretLength).trimmingCharacters(in: .newlines)
        }
        if let v = try string(tree, ["email", "ca_file"]) { c.email.caFile = v }
        if let v = try string(tree, ["email", "outbox_dir"]) { c.email.outboxDirectory = v }
        if let v = try int(tree, ["email", "retry_delay"], range: 1...3600) { c.email.retryDelay = v }
        if let v = try int(tree, ["email", "max_retry_delay"], range: 1...86400) { c.email.maxRetryDelay = v }
        if let v = try int(tree, ["email", "max_deliveries"], range: 1...100) { c.email.maxDeliveries = v }
        if let v = try int(tree, ["recovery", "hold"], range: 60...(30 * 86400)) { c.recoveryHold = v }
    }

    /// `branding`: the hosted pages' logo (a file, read once here) and colours, each checked
    /// so that no setting can make a page unreadable or carry anything but a colour or an image.
    static func buildBranding(_ tree: JSONObject, _ c: inout ServerConfiguration) throws {
        func color(_ key: String) throws -> Color? {
            guard let text = try string(tree, ["branding", key]) else { return nil }
            guard let color = Color(hex: text) else { throw ConfigurationError("branding.\(key) must be a colour such as #0a7d5a (got \"\(text.prefix(40))\")") }
            return color
        }
        c.branding.primaryColor = try color("primary_color")
        if let background = try color("page_background") {
            if let why = Branding.unreadable(background: background) { throw ConfigurationError("branding.page_background: \(why)") }
            c.branding.pageBackground = background
        }
        guard let path = try string(tree, ["branding", "logo_file"]) else { return }
        let bytes = try ConfigurationError.read(path, for: "branding.logo_file", limit: Branding.logoLimit, hint: "; a logo shown 2.5 rem high needs far less")
        guard let type = Branding.imageType(bytes) else {
            throw ConfigurationError("branding.logo_file \(path) is not a PNG, JPEG or WebP image (SVG is not taken: opened on its own, it would run scripts on the sign-in pages' origin)")
        }
        c.branding.logo = Branding.Logo(bytes: bytes, contentType: type)
    }
}
