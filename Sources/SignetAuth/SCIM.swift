public import SignetWebAuthn

/// SCIM 2.0 provisioning (RFC 7643, RFC 7644): the shapes and the small grammar Signet's
/// `/scim/v2/Users` reads, so that a company's identity provider (Okta, Microsoft Entra ID,
/// …) makes, changes, deactivates and removes its people's accounts. Pure: bytes in, a
/// ``SCIM/UserInput`` or ``SCIM/Filter`` out, or a ``SCIM/Failure`` saying why.
public enum SCIM {
    public static let userSchema = "urn:ietf:params:scim:schemas:core:2.0:User"
    public static let listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
    public static let errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"
    public static let patchSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
    /// The `app_metadata` key an identity provider's own ID for the account (`externalId`) is kept under.
    public static let externalIDKey = "scim_external_id"
    /// The `app_metadata` key the provider's `userName` is kept under when it sends the address
    /// apart (`emails`): Microsoft Entra ID's default is the user principal name, which need not
    /// be where the person's mail goes. Unique in any case (schema 28).
    public static let userNameKey = "scim_user_name"
    /// The longest `userName` kept (UTF-8 bytes): Entra's principal names are at most 113.
    static let maxUserName = 256
    /// Attributes an account always has, or holds as part of one (its name is one string), which
    /// a PATCH cannot remove.
    static let unremovable: Set<String> = ["username", "active", "emails", "id", "password", "name.givenname", "name.familyname"]
    /// Operations a PATCH may carry.
    static let maxOperations = 100

    /// A refusal with SCIM's `scimType` (RFC 7644 §3.12) beside Signet's reason.
    public struct Failure: Error, Sendable {
        public let error: AuthError
        public let scimType: String?
        public init(_ error: AuthError, scimType: String? = nil) {
            self.error = error
            self.scimType = scimType
        }
        static func malformed(_ detail: String, _ scimType: String) -> Failure { Failure(AuthError.malformed(detail), scimType: scimType) }
    }

    /// `filter` (RFC 7644 §3.4.2.2) in the form provisioning clients send to find an account:
    /// `ATTRIBUTE eq "VALUE"`, the attribute `userName`, `emails.value` (or `emails`),
    /// `displayName` (a Group's), `externalId` or `id`, names and the operator in any case.
    public enum Filter: Equatable, Sendable {
        case userName(String)
        case email(String)
        case displayName(String)
        case externalID(String)
        case id(String)
    }

    /// Parses `filter`; anything else is 400 `invalidFilter`.
    public static func filter(_ text: String) throws(Failure) -> Filter {
        let usage = Failure.malformed(#"filter supports ATTRIBUTE eq "VALUE" for userName, emails.value, displayName, externalId and id"#, "invalidFilter")
        let bytes = Array(text.utf8)
        guard bytes.count <= 512, let space = bytes.firstIndex(of: 0x20), bytes.count > space + 4 else { throw usage }
        let attribute = String(decoding: bytes[..<space], as: UTF8.self).lowercased()
        guard String(decoding: bytes[(space + 1)..<(space + 4)], as: UTF8.self).lowercased() == "eq ", bytes[space + 4] == UInt8(ascii: "\"") else { throw usage }
        guard let value = try? StrictJSON(maxDepth: 1, maxLength: 512).parse(bytes[(space + 4)...]).string, !value.isEmpty else { throw usage }
        switch attribute {
        case "username": return .userName(value)
        case "emails.value", "emails": return .email(value)
        case "displayname": return .displayName(value)
        case "externalid": return .externalID(value)
        case "id": return .id(value)
        default: throw usage
        }
    }

    /// What a request sets on an account. `nil`: left as it is; for `externalID`, `.some(nil)`
    /// removes it.
    public struct UserInput: Equatable, Sendable {
        /// `userName`: the account's address, or its provider's own name for it when the
        /// address comes apart (``SCIM/userNameKey``).
        public var userName: String?
        /// The primary email's address (or the only one's).
        public var email: String?
        public var name: String?
        public var active: Bool?
        public var externalID: String??
        /// `preferredLanguage` (else `locale`), when it is a language tag: the language of the
        /// messages of an account made from it.
        public var language: String?
        public init(userName: String? = nil, email: String? = nil, name: String? = nil, active: Bool? = nil, externalID: String?? = nil, language: String? = nil) {
            self.userName = userName
            self.language = language
            self.email = email
            self.name = name
            self.active = active
            self.externalID = externalID
        }
    }

    /// A `POST` or `PUT` body (RFC 7643 §4.1): its `schemas` must name the User schema.
    /// `userName` and the primary email (or the only one) are read apart; what each names is
    /// the ceremony's to say (``Ceremonies/scimCreate(_:by:context:)``). The name is `displayName`, else
    /// `name.formatted`, else `name.givenName` and `name.familyName`. Other attributes are
    /// not kept and are passed over.
    public static func user(_ body: JSONValue) throws(Failure) -> UserInput { try attributes(try resource(body, schema: userSchema)) }

    /// A `POST` or `PUT` body's members: a JSON object whose `schemas` name `schema`.
    static func resource(_ body: JSONValue, schema: String) throws(Failure) -> JSONObject {
        guard let object = body.object else { throw .malformed("the body must be a JSON object", "invalidSyntax") }
        guard member(object, "schemas")?.array?.contains(.string(schema)) == true else { throw .malformed("schemas must name \(schema)", "invalidSyntax") }
        return object
    }

    /// One operation of a `PATCH` (RFC 7644 §3.5.2): its `op` in lower case, and either its
    /// `path` (at most 200 visible ASCII characters) and `value`, or, without a path, the
    /// object of attributes it sets.
    struct Operation {
        let kind: String
        let path: String?
        let value: JSONValue?
        var attributes: JSONObject? { path == nil ? value?.object : nil }
    }

    /// A `PATCH` body's operations: `schemas` naming the PatchOp message, 1 to
    /// ``maxOperations`` of them, each `add`, `replace` or `remove` (one without a path an
    /// `add` or `replace` of an object).
    static func operations(_ body: JSONValue) throws(Failure) -> [Operation] {
        guard let object = body.object, member(object, "schemas")?.array?.contains(.string(patchSchema)) == true else {
            throw .malformed("a PATCH body is {\"schemas\": [\"\(patchSchema)\"], \"Operations\": [...]}", "invalidSyntax")
        }
        guard let operations = member(object, "Operations")?.array, (1...maxOperations).contains(operations.count) else {
            throw .malformed("Operations must list 1 to \(maxOperations) operations", "invalidSyntax")
        }
        var result: [Operation] = []
        for operation in operations {
            guard let op = operation.object, let kind = member(op, "op")?.string?.lowercased(), ["add", "replace", "remove"].contains(kind) else {
                throw .malformed("each operation needs an op: add, replace or remove", "invalidSyntax")
            }
            let value = member(op, "value")
            let path = try string(member(op, "path"), "path")
            if let path {
                guard path.utf8.count <= 200, path.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw .malformed("a path is at most 200 visible ASCII characters", "invalidPath")
                }
            } else {
                guard kind != "remove", value?.object != nil else { throw .malformed("an operation without a path needs an object value", "noTarget") }
            }
            result.append(Operation(kind: kind, path: path, value: value))
        }
        return result
    }

    /// The attributes of a User object, however they came (a body, or a PATCH value without a path).
    static func attributes(_ object: JSONObject) throws(Failure) -> UserInput {
        var input = UserInput()
        input.userName = try userName(member(object, "userName"))
        input.email = try primaryEmail(member(object, "emails"))
        input.name = try displayName(object)
        if let active = member(object, "active") { input.active = try boolean(active, "active") }
        if let external = member(object, "externalId") { input.externalID = .some(external == .null ? nil : try string(external, "externalId")) }
        // A directory's language is a preference: one that is no tag is passed over, never a
        // reason to refuse the person.
        input.language = [member(object, "preferredLanguage"), member(object, "locale")].lazy.compactMap { $0?.string }.first { tag in
            (2...35).contains(tag.utf8.count) && tag.utf8.allSatisfy(Ceremonies.isLanguageTagByte)
        }
        return input
    }

    /// A `PATCH` body (RFC 7644 §3.5.2): up to 100 operations, `add` and `replace` of `active`,
    /// `userName`, `displayName`, `name.formatted`, `name.givenName`, `name.familyName`,
    /// `emails[type eq "work"].value` and `externalId`, or of an object of them without a
    /// path; `remove` of `externalId`, and of `displayName`, `name.formatted` or `name` (the
    /// name cleared, as `name` is `""`). Later operations win. Another attribute of the User
    /// schema or an extension's (`title`, `phoneNumbers[type eq "work"].value`, the enterprise
    /// extension's `department`, …), which an identity provider's default mapping sends, is
    /// passed over as a body's is; `password` is refused (Signet has none to set).
    public static func patch(_ body: JSONValue) throws(Failure) -> UserInput {
        var input = UserInput()
        var given: String?, family: String?
        for operation in try operations(body) {
            let (kind, value) = (operation.kind, operation.value)
            guard let path = operation.path else {
                let more = try attributes(operation.attributes ?? [:])
                input.userName = more.userName ?? input.userName
                input.email = more.email ?? input.email
                input.name = more.name ?? input.name
                input.active = more.active ?? input.active
                input.externalID = more.externalID ?? input.externalID
                continue
            }
            let target = path.lowercased()
            // RFC 7643 §4.1.2: a User's groups are read-only; RFC 7644 §3.5.2 refuses a change.
            if target == "groups" || target.hasPrefix("groups[") || target.hasPrefix("groups.") {
                throw .malformed("a User's groups are read-only: change the Group's members (PATCH /scim/v2/Groups/{id})", "mutability")
            }
            if kind == "remove" {
                switch target {
                case "externalid": input.externalID = .some(nil)
                case "displayname", "name.formatted", "name": (input.name, given, family) = ("", nil, nil)
                case _ where Self.unremovable.contains(target) || target.hasPrefix("emails["):
                    throw .malformed("\(path.prefix(60)) cannot be removed: an account has an address and a state, and its name is one piece", "mutability")
                default: break
                }
                continue
            }
            guard let value else { throw .malformed("\(kind) of \(path.prefix(60)) needs a value", "invalidValue") }
            switch target {
            case "active": input.active = try boolean(value, "active")
            case "username": input.userName = try userName(value)
            case #"emails[type eq "work"].value"#, "emails[primary eq true].value": input.email = try string(value, path)
            case "emails": input.email = try primaryEmail(value) ?? input.email
            case "displayname", "name.formatted": input.name = try string(value, path)
            case "name.givenname": given = try string(value, path)
            case "name.familyname": family = try string(value, path)
            case "name": input.name = try value.object.map { (o: JSONObject) throws(Failure) in try displayName(["name": .object(o)]) } ?? nil
            case "externalid": input.externalID = .some(value == .null ? nil : try string(value, "externalId"))
            case "password": throw .malformed("Signet keeps no passwords: accounts sign in with passkeys and email codes", "invalidPath")
            // An attribute Signet does not keep (a title, a telephone number, the enterprise
            // extension's department): passed over, as in a body.
            default: break
            }
        }
        // Parts given after a removal name the account again.
        if (input.name ?? "").isEmpty, given != nil || family != nil { input.name = [given, family].compactMap { $0 }.joined(separator: " ") }
        return input
    }

    // MARK: reading values

    /// A member by its name in any case (RFC 7643 §2.1: attribute names are case-insensitive).
    static func member(_ object: JSONObject, _ name: String) -> JSONValue? {
        object[name] ?? object.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    static func string(_ value: JSONValue?, _ name: String) throws(Failure) -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.string else { throw .malformed("\(name.prefix(60)) must be a string", "invalidValue") }
        return text
    }

    /// `userName`: 1 to ``maxUserName`` bytes, no control character.
    static func userName(_ value: JSONValue?) throws(Failure) -> String? {
        guard let text = try string(value, "userName") else { return nil }
        guard (1...maxUserName).contains(text.utf8.count), !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .malformed("userName must be 1 to \(maxUserName) bytes with no control character", "invalidValue")
        }
        return text
    }

    /// `true` or `false`; Microsoft Entra ID sends `"True"` and `"False"`, taken too.
    static func boolean(_ value: JSONValue, _ name: String) throws(Failure) -> Bool {
        if let b = value.bool { return b }
        switch value.string?.lowercased() {
        case "true": return true
        case "false": return false
        default: throw .malformed("\(name) must be true or false", "invalidValue")
        }
    }

    /// The primary email's value, else the only one's.
    static func primaryEmail(_ value: JSONValue?) throws(Failure) -> String? {
        guard let value, value != .null else { return nil }
        guard let emails = value.array, emails.count <= 10, emails.allSatisfy({ $0.object != nil }) else {
            throw .malformed("emails must be a list of at most 10 objects with a value", "invalidValue")
        }
        let chosen = emails.first { $0["primary"] == .bool(true) || $0["primary"]?.string?.lowercased() == "true" } ?? (emails.count == 1 ? emails[0] : nil)
        guard let chosen else { return nil }
        return try string(chosen["value"], "emails.value")
    }

    static func displayName(_ object: JSONObject) throws(Failure) -> String? {
        if let display = try string(member(object, "displayName"), "displayName") { return display }
        guard let name = member(object, "name"), name != .null else { return nil }
        guard let parts = name.object else { throw .malformed("name must be an object", "invalidValue") }
        if let formatted = try string(member(parts, "formatted"), "name.formatted") { return formatted }
        let pieces = [try string(member(parts, "givenName"), "name.givenName"), try string(member(parts, "familyName"), "name.familyName")].compactMap { $0 }
        return pieces.isEmpty ? nil : pieces.joined(separator: " ")
    }
}
