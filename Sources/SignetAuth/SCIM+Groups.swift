public import SignetWebAuthn

/// SCIM Groups (RFC 7643 §4.2): an identity provider's groups, pushed as Signet's roles, their
/// members its accounts. Pure, as the rest of ``SCIM``.
extension SCIM {
    /// The Group resource's schema (RFC 7643 §4.2, §8.7.1).
    public static let groupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group"
    /// Members one request may name (a provider sends a large group's in batches).
    public static let maxMembers = 1_000

    /// What a Group body or PATCH sets. `nil`: left as it is; for `externalID`, `.some(nil)`
    /// removes it; `members`, the whole list (a body's, or a PATCH's `replace`).
    public struct GroupInput: Equatable, Sendable {
        public var displayName: String?
        public var externalID: String??
        public var members: [String]?
        /// A PATCH's `add` and `remove` of members, applied after `members` in that order.
        public var adding: [String] = []
        public var removing: [String] = []
        public init(displayName: String? = nil, externalID: String?? = nil, members: [String]? = nil, adding: [String] = [], removing: [String] = []) {
            self.displayName = displayName
            self.externalID = externalID
            self.members = members
            self.adding = adding
            self.removing = removing
        }
    }

    /// A `POST` or `PUT` body: `schemas` naming the Group schema, `displayName`, `externalId`,
    /// `members` (`[{"value": USER_ID}, …]`); other attributes are passed over.
    public static func group(_ body: JSONValue) throws(Failure) -> GroupInput { try groupAttributes(try resource(body, schema: groupSchema)) }

    static func groupAttributes(_ object: JSONObject) throws(Failure) -> GroupInput {
        var input = GroupInput()
        input.displayName = try string(member(object, "displayName"), "displayName")
        if let external = member(object, "externalId") { input.externalID = .some(external == .null ? nil : try string(external, "externalId")) }
        if let members = member(object, "members") { input.members = try memberIDs(members) }
        return input
    }

    /// A Group `PATCH` (RFC 7644 §3.5.2) as Microsoft Entra ID and Okta send it: `add` of
    /// `members`; `remove` of `members` with a value, or of `members[value eq "ID"]`;
    /// `replace` of `displayName`, `externalId` or `members`, by path or as one object. At most
    /// ``maxOperations`` operations and ``maxMembers`` members.
    public static func groupPatch(_ body: JSONValue) throws(Failure) -> GroupInput {
        var input = GroupInput()
        for operation in try operations(body) {
            let (kind, value) = (operation.kind, operation.value)
            guard let path = operation.path else {
                let more = try groupAttributes(operation.attributes ?? [:])
                input.displayName = more.displayName ?? input.displayName
                input.externalID = more.externalID ?? input.externalID
                if let members = more.members { kind == "add" ? input.add(members) : input.replace(members) }
                continue
            }
            let target = path.lowercased()
            switch (kind, target) {
            case ("add", "members"): input.add(try memberIDs(value))
            case ("replace", "members"): input.replace(try memberIDs(value))
            case ("remove", "members"):
                // Entra names the members in the value; none named would empty the group, which no
                // provider means by it.
                guard let value else { throw .malformed("remove of members names them: [{\"value\": USER_ID}]", "noTarget") }
                input.remove(try memberIDs(value))
            case ("remove", _) where target.hasPrefix("members[value eq \"") && target.hasSuffix("\"]"):
                input.remove([String(path.dropFirst(18).dropLast(2))])
            case ("add", "displayname"), ("replace", "displayname"):
                guard let name = try string(value, "displayName") else { throw .malformed("displayName needs a value", "invalidValue") }
                input.displayName = name
            case ("add", "externalid"), ("replace", "externalid"): input.externalID = .some(value == nil || value == .null ? nil : try string(value, "externalId"))
            case ("remove", "externalid"): input.externalID = .some(nil)
            case ("remove", "displayname"): throw .malformed("a group keeps its displayName", "mutability")
            default: throw .malformed("\(kind) of \(path.prefix(60)) is not supported: members, displayName and externalId are", "invalidPath")
            }
            guard (input.members?.count ?? 0) + input.adding.count + input.removing.count <= maxMembers else {
                throw .malformed("a request names at most \(maxMembers) members", "tooMany")
            }
        }
        return input
    }

    /// `[{"value": USER_ID, …}, …]`: the IDs, each 1 to 128 bytes.
    static func memberIDs(_ value: JSONValue?) throws(Failure) -> [String] {
        guard let list = value?.array, list.count <= maxMembers else {
            throw .malformed("members must be a list of at most \(maxMembers) objects with a value", "invalidValue")
        }
        var ids: [String] = []
        for item in list {
            guard let id = item.object.flatMap({ member($0, "value") })?.string, (1...128).contains(id.utf8.count) else {
                throw .malformed("each member is {\"value\": USER_ID}", "invalidValue")
            }
            ids.append(id)
        }
        return ids
    }
}

extension SCIM.GroupInput {
    /// Later operations win: an account added after it was removed is added, and so on.
    mutating func add(_ ids: [String]) {
        let given = Set(ids)
        removing.removeAll { given.contains($0) }
        var seen = Set(adding)
        for id in ids where seen.insert(id).inserted { adding.append(id) }
    }

    mutating func remove(_ ids: [String]) {
        let given = Set(ids)
        adding.removeAll { given.contains($0) }
        var seen = Set(removing)
        for id in ids where seen.insert(id).inserted { removing.append(id) }
    }

    mutating func replace(_ ids: [String]) {
        (members, adding, removing) = (ids, [], [])
    }
}
