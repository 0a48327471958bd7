public import SignetAPI
import Foundation
import SignetCrypto
public import SignetWebAuthn

/// What another Signet's export (`signet admin users export --all`) says of an account beyond
/// Auth0's record: its ID, its WebAuthn user handle, the RP ID its passkeys are scoped to, the
/// passkeys themselves, its device keys and its roles. Records from other services hold none of it.
public struct ExportedIdentity: Sendable {
    public var userID: String?
    public var userHandle: String?
    public var rpID: String?
    public var passkeys: [ExportedPasskey]
    public var deviceKeys: [ExportedDeviceKey]
    public var roles: [ExportedRole]
    /// How many recovery codes the account had not used there: they cannot move, and the
    /// import says so.
    public var unusedRecoveryCodes: Int

    public init(userID: String?, userHandle: String?, rpID: String?, passkeys: [ExportedPasskey], deviceKeys: [ExportedDeviceKey] = [],
                roles: [ExportedRole] = [], unusedRecoveryCodes: Int = 0) {
        self.userID = userID
        self.userHandle = userHandle
        self.rpID = rpID
        self.passkeys = passkeys
        self.deviceKeys = deviceKeys
        self.roles = roles
        self.unusedRecoveryCodes = unusedRecoveryCodes
    }

    /// The members of an export's record (one line of `users export --all`), each of the type
    /// that export writes, or `malformed`; absent and `null` members are `nil`.
    public init(record: JSONValue) throws {
        func text(_ member: String) throws -> String? {
            guard let value = record[member], value != .null else { return nil }
            guard let text = value.string else { throw AuthError.malformed("\(member) must be a string") }
            return text
        }
        func count(_ member: String) throws -> Int {
            guard let value = record[member], value != .null else { return 0 }
            guard let count = value.int64, (0...1_000).contains(count) else { throw AuthError.malformed("\(member) must be a whole number from 0 to 1000") }
            return Int(count)
        }
        func list<T: Decodable>(_ member: String, _ what: String) throws -> [T] {
            guard let list = record[member], list != .null else { return [] }
            guard list.array != nil, let decoded = try? JSONDecoder().decode([T].self, from: Data(list.serialized.utf8)) else {
                throw AuthError.malformed("\(member) must be a list of \(what) as signet admin users export --all writes them")
            }
            return decoded
        }
        self.init(userID: try text("user_id"), userHandle: try text("user_handle"), rpID: try text("rp_id"), passkeys: try list("passkeys", "passkeys"),
                  deviceKeys: try list("device_keys", "device keys"), roles: try list("roles", "roles"), unusedRecoveryCodes: try count("unused_recovery_codes"))
    }
}

/// What an import carries over of an ``ExportedIdentity``, checked.
struct CarriedIdentity: Sendable {
    /// The account's ID, when the export's can be kept.
    var userID: String?
    var handle: [UInt8]?
    /// The passkeys and device keys, their owner filled in when the account is made.
    var passkeys: [CredentialRow]
    var deviceKeys: [DeviceKeyRow] = []
    /// The roles given, by their ID here, each with when the membership ends.
    var roles: [(role: RoleRow, expiresAt: Int64?)] = []
    /// What was kept and left out, in words, for the report and the audit row.
    var notes: [String]

    var auditNote: String {
        (userID == nil ? "" : "ID kept; ") + (passkeys.isEmpty ? "" : "\(passkeys.count) passkey(s); ")
            + (deviceKeys.isEmpty ? "" : "\(deviceKeys.count) device key(s); ")
            + (roles.isEmpty ? "" : "role(s) " + roles.map(\.role.name).joined(separator: ", ") + "; ")
    }
}

/// An imported account and what came with it.
public struct ImportedAccount: Sendable {
    public let user: ManagementUser
    /// Whether the account has its ID from the export (the `sub` apps know it by).
    public let idKept: Bool
    /// How many passkeys came with it: its owner signs in with them as before.
    public let passkeys: Int
    /// How many device keys came with it: its apps approve actions with them as before.
    public let deviceKeys: Int
    /// The names of the roles it was given, as it had them there.
    public let roles: [String]
    /// What was left out, and why.
    public let notes: [String]
}

extension Ceremonies {
    /// The most passkeys, the most device keys, and the most roles, one imported record may carry.
    public static let maxCarriedEach = 100

    /// `signet admin users import`: one account of an export, made as
    /// ``createUser(_:by:context:)`` makes one, keeping when it was made there (`createdAt`, in
    /// milliseconds; a time in the future is taken as now) and whether it was blocked there (a
    /// blocked account is made blocked, in the same insert, and never mailed). From another
    /// Signet's export it keeps the account's ID (unless an account here has it), its user
    /// handle, and, where the export's RP ID is this deployment's, its passkeys (WebAuthn L3
    /// §6.1: a credential is scoped to its RP ID; §5.4.3: the authenticator returns the user
    /// handle at sign-in), all in the account's one transaction: a passkey registered here
    /// already refuses the record (`credential_exists`), and nothing of it is written.
    public func importUser(_ new: ManagementNewUser, createdAt: Int64?, blocked: Bool, carrying given: ExportedIdentity?, by caller: ManagementCaller,
                           context: RequestContext) throws -> ImportedAccount {
        let carried = try given.map(carriedIdentity)
        do {
            let user = try makeAccount(new, createdAt: createdAt.map { min($0, nowMillis) } ?? nowMillis, blocked: blocked, carried: carried, by: caller, context: context)
            return ImportedAccount(user: user, idKept: carried?.userID != nil, passkeys: carried?.passkeys.count ?? 0, deviceKeys: carried?.deviceKeys.count ?? 0,
                                   roles: carried?.roles.map(\.role.name) ?? [], notes: carried?.notes ?? [])
        } catch let error as StoreError where error.code == .conflict {
            throw AuthError(.conflict, "its user_handle, a device key's ID, or (made meanwhile) its user_id is another account's here, or a role it is given was removed meanwhile")
        }
    }

    /// The export's identity, checked: bad values refuse the record; what cannot be kept here is
    /// left out with a note.
    func carriedIdentity(_ given: ExportedIdentity) throws -> CarriedIdentity {
        var carried = CarriedIdentity(userID: nil, handle: nil, passkeys: [], notes: [])
        if let id = given.userID, Self.isSignetUserID(id) {
            if try store.user(id: id) == nil {
                carried.userID = id
            } else {
                carried.notes.append("its user_id is another account's here: given a new one")
            }
        }
        if let text = given.userHandle {
            guard let bytes = Base64URL.decode(text), (1...64).contains(bytes.count) else {
                throw AuthError.malformed("user_handle must be base64url of 1 to 64 bytes (WebAuthn L3 §5.4.3)")
            }
            carried.handle = bytes
        }
        let count = given.passkeys.count
        if count > Self.maxCarriedEach { throw AuthError.malformed("at most \(Self.maxCarriedEach) passkeys an account") }
        if count > 0, carried.handle == nil {
            carried.notes.append("\(count) passkey(s) left out: without its user_handle they would not sign in")
        } else if count > 0, given.rpID != configuration.rpID {
            carried.notes.append("\(count) passkey(s) left out: they are for RP ID \(given.rpID ?? "(none given)"), not \(configuration.rpID)")
        } else {
            let now = nowMillis
            carried.passkeys = try given.passkeys.map { try Self.importedPasskey($0, now: now, trusted: trustedRoots) }
            let unmarked = zip(given.passkeys, carried.passkeys).count { $0.attestation_root != nil && !$1.attested }
            if unmarked > 0 {
                carried.notes.append("\(unmarked) passkey(s) not marked attested: the trust anchor their attestation chained to is not one of this deployment's")
            }
        }
        carried.deviceKeys = try carriedDeviceKeys(given.deviceKeys, passkeys: carried.passkeys, notes: &carried.notes)
        carried.roles = try carriedRoles(given.roles, notes: &carried.notes)
        if given.unusedRecoveryCodes > 0 {
            // Each is an HMAC under the other deployment's code key, which no export carries.
            carried.notes.append("\(given.unusedRecoveryCodes) unused recovery code(s) did not move: the owner makes new ones on the account page")
        }
        return carried
    }

    /// The export's roles that this deployment has a role of the same name for (role IDs differ
    /// between deployments; what a role grants is each deployment's own), with when each
    /// membership ends. A membership that has ended, and a name with no role here, is left out
    /// with a note; a bad name or time refuses the record.
    func carriedRoles(_ given: [ExportedRole], notes: inout [String]) throws -> [(role: RoleRow, expiresAt: Int64?)] {
        guard !given.isEmpty else { return [] }
        guard given.count <= Self.maxCarriedEach else { throw AuthError.malformed("at most \(Self.maxCarriedEach) roles an account") }
        let now = nowMillis
        var carried: [(role: RoleRow, expiresAt: Int64?)] = [], ended = 0, missing: [String] = [], seen: Set<String> = []
        for exported in given {
            let (name, end) = try Self.importedRole(exported)
            guard seen.insert(name).inserted else { throw AuthError.malformed("role \(name.prefix(40)) is given twice") }
            if let end, end <= now {
                ended += 1
            } else if let role = try store.roles(nameFilter: name, offset: 0, limit: 1_000).roles.first(where: { $0.name == name }) {
                carried.append((role, end))
            } else {
                missing.append(name)
            }
        }
        if ended > 0 { notes.append("\(ended) role(s) left out: the membership had ended") }
        if !missing.isEmpty {
            notes.append("role(s) left out, none of that name here: " + missing.map { String($0.prefix(40)) }.joined(separator: ", "))
        }
        return carried
    }

    /// The export's device keys, each checked as an enrolment checks one. A key enrolled by a
    /// device that another approved (``DeviceKeyRow/approvedBy``) comes only with the passkey or
    /// device key that approved it, so that revoking that one still takes it; the others are
    /// left out with a note. The live ones must fit `actions.max_device_keys`, one a device.
    func carriedDeviceKeys(_ given: [ExportedDeviceKey], passkeys: [CredentialRow], notes: inout [String]) throws -> [DeviceKeyRow] {
        guard !given.isEmpty else { return [] }
        guard given.count <= Self.maxCarriedEach else { throw AuthError.malformed("at most \(Self.maxCarriedEach) device keys an account") }
        let now = nowMillis
        var keys = try given.map { try Self.importedDeviceKey($0, now: now) }
        let approvers = Set(passkeys.map { Base64URL.encode($0.id) })
        // Until none is left to drop: a key whose approver is neither a passkey that came nor a
        // key still here.
        while let orphan = keys.firstIndex(where: { key in
            guard let approver = key.approvedBy else { return false }
            return !approvers.contains(approver) && !keys.contains { $0.id == approver }
        }) {
            keys.remove(at: orphan)
        }
        if keys.count < given.count {
            notes.append("\(given.count - keys.count) device key(s) left out: the passkey or device key that approved their device did not come")
        }
        let live = keys.filter { $0.revokedAt == nil }
        guard live.count <= configuration.maxDeviceKeys else {
            throw AuthError.malformed("\(live.count) live device keys, more than actions.max_device_keys (\(configuration.maxDeviceKeys)) allows here")
        }
        guard Set(live.map(\.deviceID)).count == live.count else { throw AuthError.malformed("two live device keys for one device_id") }
        return keys
    }

    /// An exported role's name, checked as a role's name is when it is made (trimmed, 1 to 256
    /// characters, no control or bidirectional-override character), and the end of its
    /// membership in milliseconds (`nil`: none).
    package static func importedRole(_ r: ExportedRole) throws -> (name: String, expiresAt: Int64?) {
        guard let name = try displayName(r.name, member: "a role's name", limit: 256) else { throw AuthError.malformed("a role's name is empty") }
        guard let text = r.expires_at else { return (name, nil) }
        guard let end = millis(iso: text) else { throw AuthError.malformed("role \(name.prefix(40)): expires_at is not an ISO 8601 time") }
        return (name, end)
    }

    /// Whether `id` has the form of the IDs Signet gives (a UUID, lower case).
    static func isSignetUserID(_ id: String) -> Bool {
        id.utf8.count == 36 && UUID(uuidString: id) != nil && id == id.lowercased()
    }

    /// An exported passkey as the row a registration would have written, each value checked as
    /// registration checks it (WebAuthn L3 §7.1 steps 25 and 27; §5.8.5 for the key). Its
    /// attestation statement is not in the export: it is marked attested only when the anchor
    /// it chained to there (`attestation_root`) is one of `trusted`, this deployment's.
    package static func importedPasskey(_ p: ExportedPasskey, now: Int64, trusted: Set<[UInt8]>) throws -> CredentialRow {
        func refused(_ why: String) -> AuthError { .malformed("passkey \(p.id.prefix(22)): \(why)") }
        guard let id = Base64URL.decode(p.id), (1...AuthenticatorData.maxCredentialIDLength).contains(id.count) else {
            throw refused("id must be base64url of 1 to \(AuthenticatorData.maxCredentialIDLength) bytes")
        }
        guard let raw = Base64URL.decode(p.public_key), let key = try? COSEKey(raw) else { throw refused("public_key is not a COSE key (WebAuthn L3 §5.8.5)") }
        guard key.algorithm.rawValue == p.algorithm else { throw refused("algorithm \(p.algorithm) is not its public key's (\(key.algorithm.rawValue))") }
        guard (0...Int64(UInt32.max)).contains(p.sign_count) else { throw refused("sign_count must be 0 to \(UInt32.max)") }
        guard p.aaguid.utf8.count == 36, let aaguid = UUID(uuidString: p.aaguid) else { throw refused("aaguid is not a UUID") }
        guard (1...32).contains(p.attestation_format.utf8.count),
              p.attestation_format.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2d }) else {
            throw refused("attestation_format must be 1 to 32 bytes of a-z, 0-9 and -")
        }
        // §6.3.3: a credential that is backed up is backup eligible.
        guard p.backup_eligible || !p.backup_state else { throw refused("backup_state without backup_eligible") }
        func millis(_ seconds: Int64?, _ member: String) throws -> Int64? {
            guard let seconds else { return nil }
            guard (0...now / 1000).contains(seconds) else { throw refused("\(member) must be a time in seconds, not after now") }
            return seconds * 1000
        }
        var root: [UInt8]?
        if let text = p.attestation_root {
            guard let bytes = Base64URL.decode(text), bytes.count == 32 else { throw refused("attestation_root must be base64url of a SHA-256") }
            root = trusted.contains(bytes) ? bytes : nil
        }
        return CredentialRow(
            id: id, userID: "", publicKey: raw, algorithm: p.algorithm, signCount: p.sign_count, aaguid: aaguid.uuidString.lowercased(),
            format: p.attestation_format, backupEligible: p.backup_eligible, backupState: p.backup_state, transports: storedTransports(p.transports),
            name: try displayName(p.name, member: "name", limit: 100), createdAt: try millis(p.created_at, "created_at") ?? now,
            lastUsedAt: try millis(p.last_used_at, "last_used_at"), revokedAt: try millis(p.revoked_at, "revoked_at"), attested: root != nil, attestationRoot: root)
    }

    /// An exported device key as the row an enrolment would have written, each value checked
    /// as enrolment checks it (the key P-256, ``deviceKey(_:)``). Its recovery is not carried.
    package static func importedDeviceKey(_ k: ExportedDeviceKey, now: Int64) throws -> DeviceKeyRow {
        func refused(_ why: String) -> AuthError { .malformed("device key \(k.id.prefix(24)): \(why)") }
        guard (1...64).contains(k.id.utf8.count), Base64URL.decode(k.id.hasPrefix("dk_") ? String(k.id.dropFirst(3)) : k.id)?.isEmpty == false else {
            throw refused("id must be 1 to 64 bytes of base64url, after dk_")
        }
        let key: PublicKey
        do { key = try deviceKey(k.public_key) } catch { throw refused("public_key: \(AuthError(error).detail)") }
        try checkedDevice(id: k.device_id, platform: k.platform)
        if let approver = k.approved_by, !(1...1400).contains(approver.utf8.count) { throw refused("approved_by must be 1 to 1400 bytes") }
        func millis(_ seconds: Int64?, _ member: String) throws -> Int64? {
            guard let seconds else { return nil }
            guard (0...now / 1000).contains(seconds) else { throw refused("\(member) must be a time in seconds, not after now") }
            return seconds * 1000
        }
        return DeviceKeyRow(id: k.id, userID: "", deviceID: k.device_id, platform: k.platform, name: try displayName(k.name, member: "name", limit: 100),
                            publicKey: key.spki, createdAt: try millis(k.created_at, "created_at") ?? now, lastUsedAt: try millis(k.last_used_at, "last_used_at"),
                            revokedAt: try millis(k.revoked_at, "revoked_at"), approvedBy: k.approved_by)
    }

    /// The transports kept of what a client says of a credential (WebAuthn L3 §5.2.1.3): hints
    /// for later ceremonies, so at most 8 of at most 32 bytes each.
    static func storedTransports(_ given: [String]) -> [String] {
        given.filter { $0.utf8.count <= 32 }.prefix(8).map { $0 }
    }
}
