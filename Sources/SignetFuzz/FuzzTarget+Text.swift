import Foundation
import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// The fuzz checks of what arrives as text: addresses, mail, query strings, redirect URIs and
/// whole HTTP requests.
extension FuzzTarget {
    /// A list read from any bytes answers every host with a suffix the host ends in, a
    /// registrable domain of one label more, and never both a listed suffix and a domain.
    static func checkPublicSuffixList(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        guard let list = PublicSuffixList(text: text) else { return }
        precondition(list.count > 0, "a list without rules")
        for line in text.utf8.split(separator: 0x0A).prefix(32) {
            let host = String(decoding: line, as: UTF8.self)
            let labels = host.lowercased()[...].split(atScalar: ".").map { Array($0.utf8) }
            let (suffix, _) = list.publicSuffix(of: host)
            let suffixLabels = suffix.isEmpty ? [] : suffix[...].split(atScalar: ".").map { Array($0.utf8) }
            precondition(labels.isEmpty == suffixLabels.isEmpty && labels.suffix(suffixLabels.count).elementsEqual(suffixLabels), "a suffix the host does not end in")
            if let domain = list.registrableDomain(of: host) {
                let domainLabels = domain[...].split(atScalar: ".").map { Array($0.utf8) }
                precondition(domainLabels.count == suffixLabels.count + 1 && labels.suffix(domainLabels.count).elementsEqual(domainLabels), "a registrable domain not one label over its suffix")
                precondition(!list.lists(host), "a listed suffix with a registrable domain")
            }
        }
    }

    static func checkEmailAddress(_ body: [UInt8]) {
        if let email = try? Ceremonies.emailAddress(String(decoding: body, as: UTF8.self), member: "email") {
            // By byte and code point: "\r\n" is one Character, which neither "\r" nor "\n" equals.
            func ats(_ text: String) -> Int { text.utf8.filter { $0 == UInt8(ascii: "@") }.count }
            func breaksHeader(_ text: String) -> Bool { text.utf8.contains { $0 == 13 || $0 == 10 || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") } }
            precondition(email.utf8.count <= 254 * 4 && ats(email) == 1, "an accepted address without one @")
            precondition(!breaksHeader(email), "an accepted address that could break a mail header")
            precondition((try? Ceremonies.emailAddress(email, member: "email")) == email, "normalizing an address twice changed it")
            // The relay's form: one @, the local part as it was, nothing that could break a header.
            let relayed = MailMessage.asciiAddress(email)
            precondition(ats(relayed) == 1 && !breaksHeader(relayed) && relayed.utf8.allSatisfy({ $0 >= 0x20 }), "the relay's form of an address could break the envelope")
            let local = { (text: String) in text.utf8.prefix { $0 != UInt8(ascii: "@") } }
            precondition(local(relayed).elementsEqual(local(email)), "the relay's form changed the local part")
        }
        // An email code as typed: bounded, and only what it was without spaces and dashes.
        let typed = Ceremonies.typedCode(String(decoding: body, as: UTF8.self))
        precondition(typed.count <= 32 && !typed.contains(where: { $0.isWhitespace || $0 == "-" }), "a typed code kept a separator or grew")
    }

    static func checkMailText(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        let encoded = MailMessage.quotedPrintable(text)
        precondition(encoded.utf8.allSatisfy { $0 < 0x80 }, "quoted-printable with a byte outside ASCII")
        precondition(encoded.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 }, "a quoted-printable line longer than 76")
        for word in [MailMessage.encodedWord(text), MailMessage.displayName(text)] {
            // Only folds: every line after the first starts with a space, and no line holds a CR or LF of its own.
            let lines = word.components(separatedBy: "\r\n")
            precondition(lines.allSatisfy { !$0.utf8.contains { $0 == 13 || $0 == 10 } }, "a header word with a line break")
            precondition(lines.dropFirst().allSatisfy { $0.hasPrefix(" =?UTF-8?B?") }, "a header line that does not fold")
            precondition(lines.allSatisfy { !$0.contains("=?") || $0.trimmingPrefix(" ").utf8.count <= 68 }, "an encoded word longer than 68")
        }
    }

    static func checkQueryString(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        let query = HTTPRequest.parseQuery(text[...])
        precondition(query.count <= 64, "unbounded query")
        // What was decoded encodes and decodes back to itself.
        let hex = Array("0123456789ABCDEF".utf8)
        for (name, value) in query {
            var encoded: [UInt8] = []
            for b in value.utf8 { if b.isASCIIAlphanumeric { encoded.append(b) } else { encoded += [37, hex[Int(b >> 4)], hex[Int(b & 15)]] } }
            precondition(HTTPRequest.percentDecoded(encoded) == value, "percent round trip changed \(name)")
        }
    }

    static func checkRedirectURI(_ body: [UInt8]) {
        let uri = String(decoding: body, as: UTF8.self)
        // Registered means the same bytes: Swift's `contains` would take a canonical twin.
        if Ceremonies.redirectAllowed(uri, for: webClient), !webClient.redirectURIs.containsExactly(uri) {
            precondition(["http://127.0.0.1", "http://localhost", "http://[::1]"].contains { uri.utf8.starts(with: $0.utf8) }, "a non-loopback URI matched")
            precondition(!uri.utf8.contains(UInt8(ascii: "#")), "a fragment in a redirect URI")
        }
        // A back-channel logout URI goes to libcurl as it is: visible ASCII, no fragment, and
        // an `http` one's authority, read as bytes up to the path or query, is a loopback
        // address whatever URLComponents made of it.
        if Ceremonies.isClientEndpointURI(uri) {
            let bytes = Array(uri.utf8)
            precondition(bytes.allSatisfy { (0x21...0x7E).contains($0) } && !bytes.contains(UInt8(ascii: "#")), "a logout URI curl would read otherwise")
            let lower = uri.lowercased()
            if lower.hasPrefix("http://") {
                let authority = lower.dropFirst(7).prefix { $0 != "/" && $0 != "?" }
                let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
                precondition(["127.0.0.1", "localhost", "[::1]"].contains(host), "an http logout URI to \(host)")
                precondition(host.count == authority.count || authority.dropFirst(host.count).first == ":", "an http logout URI's authority \(authority)")
            } else {
                precondition(lower.hasPrefix("https://"), "a logout URI of another scheme")
            }
        }
        let target = Ceremonies.appending(to: uri, [("code", uri), ("state", nil)])
        // Compared as bytes: `hasPrefix` compares characters, and the `?` appended to a URI that
        // ends with a prepended mark (U+0600) makes one character with it.
        precondition(target.utf8.starts(with: uri.utf8), "the redirect lost its URI")
        precondition(target.utf8.filter { $0 == UInt8(ascii: "?") }.count == max(1, uri.utf8.filter { $0 == UInt8(ascii: "?") }.count),
                     "the parameters did not join the query")
    }

    static func checkHTTPRequest(_ body: [UInt8]) {
        let parse = { (bytes: [UInt8]) in bytes.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024) } }
        if case .request(let head, let content, let consumed) = parse(body) {
            precondition(consumed > 0 && consumed <= body.count && content.count <= 1024, "a request longer than its bytes or its cap")
            // The request ends where it says: one byte short of it is not yet a request, and the
            // same bytes alone give the same request.
            let short = parse(Array(body.prefix(consumed - 1)))
            precondition(short == .incomplete(expectsContinue: false) || short == .incomplete(expectsContinue: true), "a request whole before its last byte")
            precondition(parse(Array(body.prefix(consumed))) == .request(head, body: content, consumed: consumed), "a request that depends on the bytes after it")
            precondition(!head.path.utf8.contains(0) && head.headers.count <= 100, "a NUL in a path or unbounded headers")
        }
        // Read in two pieces, split where the input's first byte says, the bytes give what
        // they give in one call.
        if !body.isEmpty {
            let split = Int(body[0]) * body.count / 256
            var progress = ParseProgress()
            let first = Array(body.prefix(split)).withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &progress) }
            let resumed: ParsedRequest
            if case .incomplete = first {
                resumed = body.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &progress) }
            } else {
                resumed = parse(body)
            }
            precondition(resumed == parse(body), "a request read in two pieces differs from the same bytes read at once")
            // The same, with the chunks read from the first piece dropped before the second:
            // the same body, as many bytes fewer consumed as were dropped.
            if case .incomplete = first {
                var compacted = ParseProgress()
                var input = Array(body.prefix(split))
                _ = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &compacted) }
                let dropped = RequestParser.compactChunks(&input, progress: &compacted)
                input += body[split...]
                let after = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &compacted) }
                switch (after, resumed) {
                case let (.request(h1, b1, c1), .request(h2, b2, c2)):
                    precondition(h1.path == h2.path && b1 == b2 && c1 + dropped == c2, "a compacted chunked body differs")
                case (.request, _), (_, .request):
                    preconditionFailure("compacting chunks changed whether a request was read")
                default:
                    precondition(after == resumed, "compacting chunks changed a refusal")
                }
            }
        }
    }

    /// A name made from a `User-Agent` is made of Signet's own words only (a browser of its list,
    /// "Browser", a system of its list), so nothing of the text reaches a page, a passkey's name
    /// or a mail; what a session keeps of it is its first 300 characters.
    static func checkUserAgent(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        let (browser, system) = Ceremonies.browserParts(text)
        let browsers = Set(Ceremonies.browserMarks.map(\.name))
        precondition(browser.map(browsers.contains) != false && system.map(Ceremonies.sdkSystems.contains) != false, "a browser or system not from the lists")
        let words = browsers.union(Ceremonies.sdkSystems).union(["Browser"])
        precondition(Ceremonies.browserName(text).components(separatedBy: " · ").allSatisfy(words.contains), "a name with words of the text")
        precondition((Ceremonies.knownBrowserName(text) == nil) == (browser == nil), "a known browser without a browser")
        if let kept = Ceremonies.clippedUserAgent(text) {
            precondition(kept.count <= 300 && text.hasPrefix(kept), "a kept User-Agent that grew or is not the text's start")
        }
    }
}
