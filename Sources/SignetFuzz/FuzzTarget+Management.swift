import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetWeb
import SignetWebAuthn

/// The fuzz checks of what operators send: Management API searches, clients, accounts, log
/// streams, branding and SCIM bodies.
extension FuzzTarget {
    static func checkManagementQuery(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        if case .prefix(let prefix)? = try? Ceremonies.emailQuery(text) { precondition(!prefix.utf8.contains(UInt8(ascii: "*")), "a prefix with a wildcard") }
        // The same text as a stats day: eight digits naming a real day, which reads back as them.
        if let day = try? Ceremonies.day(text, "from") {
            let iso = Ceremonies.iso(day * 86_400_000)
            precondition(text.utf8.count == 8 && iso.prefix(10).filter { $0 != "-" } == text, "a day that is not the one written")
        }
        // The same text as a page of sessions' `from`: a cursor whose own text reads back as it,
        // with an ID a session could have.
        if let cursor = try? SessionCursor(parsing: text) {
            precondition((try? SessionCursor(parsing: cursor.text)) == cursor, "a cursor that does not read back as itself")
            precondition(cursor.after.map { (1...128).contains($0.id.utf8.count) && $0.createdAt >= 0 } ?? true, "a cursor past any session")
        }
        // The metadata form: plain keys (no quote, dot or bracket that a JSON path would read
        // otherwise), a value without a quote, one of the two objects.
        if let match = (try? Ceremonies.metadataQuery(text)) ?? nil {
            precondition(["app_metadata", "user_metadata"].contains(match.column) && (1...5).contains(match.path.count)
                         && match.path.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(Ceremonies.isMetadataKeyByte) } && !match.value.contains("\""), "a metadata search Signet does not make")
        }
        // The model form: a UUID in lower case, nothing else.
        if let model = (try? Ceremonies.passkeyModelQuery(text)) ?? nil {
            precondition(model.utf8.count == 36 && UUID(uuidString: model)?.uuidString.lowercased() == model, "a model that is not an AAGUID")
        }
        // The same text as `sort` and as `fields`: the column named (by creation when none is),
        // field names without a comma.
        if let (order, _) = try? Ceremonies.userOrder(text) {
            precondition(text.isEmpty ? order == .createdAt : text.utf8.starts(with: (order.rawValue + ":").utf8), "a sort on another column than named")
        }
        if let fields = try? SignetService.userFields(["fields": text]) { precondition(fields.names.allSatisfy { !$0.utf8.contains(UInt8(ascii: ",")) }, "a field name with a comma") }
        // The same text as the logs' q: what it names is quoted in it, and only events Signet writes.
        var logs = AuditQuery()
        if (try? Ceremonies.narrow(&logs, text)) != nil {
            if let user = logs.userID {
                precondition(!user.isEmpty && !user.utf8.contains(UInt8(ascii: "\"")), "a user_id with a quote")
                precondition(Array(text.utf8).firstRange(of: Array("user_id:\"\(user)\"".utf8)) != nil, "a user_id the text does not quote")
            }
            precondition((logs.events ?? []).allSatisfy { AuditKind(rawValue: $0.kind)?.rawValue.utf8.elementsEqual($0.kind.utf8) == true }, "an event Signet does not write")
        }
    }

    static func checkClientSettings(_ body: [UInt8]) {
        guard let json = try? StrictJSON().parse(body), let new = try? NewClient(wire: json) else { return }
        let p = new.patch
        let row = ClientRow(id: "c_fuzz", name: new.name, type: new.type, secretHash: nil, grants: p.grants ?? [], scopes: p.scopes ?? [],
                            redirectURIs: p.redirectURIs ?? [], audiences: p.audiences ?? nil, createdAt: 0, postLogoutRedirectURIs: p.postLogoutRedirectURIs ?? [],
                            backchannelLogoutURI: p.backchannelLogoutURI ?? nil, jwks: p.jwks, requirePushedRequests: p.requirePushedRequests ?? false,
                            jwksURI: p.jwksURI, requiredRoles: p.requiredRoles ?? nil, minimumACR: p.minimumACR ?? nil,
                            refreshTokenLifetime: p.refreshLifetimes?.idle, refreshTokenAbsoluteLifetime: p.refreshLifetimes?.absolute,
                            refreshTokenRetryWindow: p.refreshLifetimes?.retryWindow)
        guard (try? Ceremonies.validate(row)) != nil else { return }
        // Lists are stored as space-separated words: what is accepted reads back as itself.
        for list in [row.grants, row.scopes, row.redirectURIs, row.postLogoutRedirectURIs, row.audiences ?? []] {
            precondition(list.count <= 100, "an unbounded list accepted")
            precondition(list.joined(separator: " ").split(separator: " ").map(String.init) == list, "a stored list would read back otherwise")
        }
        precondition(row.name.count <= 100 && !(row.usesKeys && row.type == "public"), "a name too long, or keys on a public client")
        // One place for a client's keys, and a published set's address is one curl may call.
        precondition(!(row.jwks != nil && row.jwksURI != nil) && row.jwksURI.map(Ceremonies.isClientEndpointURI) != false, "two places for keys, or a bad jwks_uri")
        // The client's policy: 1 to 20 roles, once each; a class Signet reaches; lifetimes in bounds.
        precondition(row.requiredRoles.map { (1...20).contains($0.count) && Set($0).count == $0.count } != false, "required_roles out of bounds")
        precondition(row.minimumACR.map(AuthenticationContext.supported.contains) != false, "a minimum_acr Signet never reaches")
        precondition([row.refreshTokenLifetime, row.refreshTokenAbsoluteLifetime].allSatisfy { $0.map(Ceremonies.refreshLifetimeRange.contains) != false },
                     "a session lifetime out of bounds")
        precondition(row.refreshTokenRetryWindow.map(Ceremonies.refreshRetryWindowRange.contains) != false, "a retry window out of bounds")
    }

    static func checkNewUser(_ body: [UInt8]) {
        guard let json = try? StrictJSON().parse(body), let new = try? ManagementNewUser(wire: json),
              let (email, name, language) = try? Ceremonies.checked(new) else { return }
        precondition(email.unicodeScalars.filter { $0 == "@" }.count == 1 && email == email.lowercased(), "an address with other than one @, or not lower case")
        precondition(!email.unicodeScalars.contains { $0.properties.isWhitespace || Ceremonies.isUnsafeInText($0) }, "an address with a space or control")
        precondition(name.map { $0.count <= 256 && !$0.isEmpty && !$0.unicodeScalars.contains(where: Ceremonies.isUnsafeInText) } ?? true, "an unsafe name")
        precondition(Notice.languages.contains(language), "a language messages are not written in")
        // Metadata accepted is an object of at most the limit that reads back as itself.
        for document in [new.app_metadata, new.user_metadata].compactMap({ $0 }) {
            guard let text = try? Ceremonies.mergedMetadata(nil, document, member: "metadata") else { continue }
            precondition(text.utf8.count <= Ceremonies.metadataLimit && Ceremonies.metadataDocument(text).map { Ceremonies.metadataDocument(try? Ceremonies.mergedMetadata(nil, $0, member: "m")) == $0 } == true,
                         "metadata over the limit, or that does not read back as itself")
        }
    }

    static func checkLogStreamSettings(_ body: [UInt8]) {
        guard let json = try? StrictJSON().parse(body), let settings = try? LogStreamSettings(wire: json, new: true),
              let name = settings.name, let endpoint = settings.endpoint else { return }
        let row = LogStreamRow(id: "lst_fuzz", name: name, status: settings.status ?? "active", endpoint: endpoint, contentType: settings.contentType ?? "application/json",
                               contentFormat: settings.contentFormat ?? "JSONARRAY", filters: settings.filters ?? [], authorization: nil, createdAt: 0)
        guard (try? Ceremonies.validate(row, authorization: settings.authorization ?? nil)) != nil else { return }
        // What goes into a request's head is one header line each: nothing can add another.
        for value in [row.contentType, (settings.authorization ?? nil) ?? ""] {
            precondition(!value.utf8.contains { $0 < 0x20 || $0 > 0x7E }, "a header value with a line break, a control or a non-ASCII byte")
        }
        precondition(Ceremonies.isClientEndpointURI(row.endpoint) && ["JSONARRAY", "JSONLINES", "JSONOBJECT"].contains(row.contentFormat), "an endpoint curl may not call, or an unknown format")
        // Filters are known categories, each once, and read back from their stored words as themselves.
        precondition(row.filters.allSatisfy(AuditKind.streamCategories.contains) && Set(row.filters).count == row.filters.count
                     && row.filters.joined(separator: " ").split(separator: " ").map(String.init) == row.filters, "a filter that is no category, or twice")
    }

    static func checkBranding(_ body: [UInt8]) {
        let cut = body.firstIndex(of: 0x0A) ?? body.endIndex
        if let color = Color(hex: String(decoding: body[..<cut], as: UTF8.self)) {
            // Only a colour goes into the stylesheet: it reads back as itself, six hex digits.
            let hex = color.description
            precondition(Color(hex: hex) == color && hex.utf8.count == 7 && hex.utf8.dropFirst().allSatisfy { $0.isASCIIHexLower }, "a colour written otherwise")
            precondition(color.contrast(with: color.textOn) >= Branding.minimumContrast, "button text under 4.5:1")
            let css = Stylesheet.brand(primary: hex, primaryText: color.textOn.description, accent: hex, darkAccent: hex, background: hex)
            precondition(css.utf8.allSatisfy { $0 == 0x0A || (0x20..<0x7F).contains($0) } && !css.contains("<"), "the stylesheet carries more than colours")
        }
        let image = Array(body[cut...].dropFirst())
        if let type = Branding.imageType(image) {
            precondition(["image/png", "image/jpeg", "image/webp"].contains(type) && image.first != UInt8(ascii: "<"), "an image type that may run script")
        }
    }

    static func checkSCIM(_ body: [UInt8]) {
        guard let mode = body.first else { return }
        let rest = body.dropFirst()
        switch mode % 5 {
        case 0:
            // A filter read is one attribute and a value that is not empty.
            if let filter = try? SCIM.filter(String(decoding: rest, as: UTF8.self)) {
                switch filter {
                case .userName(let v), .email(let v), .displayName(let v), .externalID(let v), .id(let v): precondition(!v.isEmpty && v.utf8.count <= 512, "an empty or unbounded filter value")
                }
            }
        case 3, 4:
            // A Group's members are bounded, each an ID of 1 to 128 bytes, never both added and removed.
            guard let json = try? StrictJSON(maxDepth: 16).parse(rest), let input = try? (mode % 5 == 3 ? SCIM.group(json) : SCIM.groupPatch(json)) else { return }
            let named = (input.members ?? []) + input.adding + input.removing
            precondition(named.count <= SCIM.maxMembers && named.allSatisfy { (1...128).contains($0.utf8.count) }, "unbounded members")
            precondition(Set(input.adding).isDisjoint(with: input.removing) && Set(input.adding).count == input.adding.count, "a member both added and removed")
        default:
            guard let json = try? StrictJSON(maxDepth: 16).parse(rest) else { return }
            // What a body sets reads back from it alone; a userName kept is bounded and has no
            // control character.
            if let input = try? (mode % 5 == 1 ? SCIM.user(json) : SCIM.patch(json)) {
                for value in [input.email, input.userName].compactMap({ $0 }) {
                    precondition(json.serialized.contains(JSONValue.string(value).serialized), "a value from nowhere")
                }
                if let name = input.userName {
                    precondition((1...256).contains(name.utf8.count) && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "an unbounded userName")
                }
            }
        }
    }
}
