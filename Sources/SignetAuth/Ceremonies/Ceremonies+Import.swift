public import SignetAPI
import Foundation
public import SignetWebAuthn

/// What another Signet's export (`signet admin users export --all`) says of an account beyond
/// Auth0's record: its ID, its WebAuthn user handle, the RP ID its passkeys are scoped to, and
/// the passkeys themselves. Records from other services hold none of it.
public struct ExportedIdentity: Sendable {
    public var userID: String?
    public var userHandle: String?
    public var rpID: String?
    public var passkeys: [ExportedPasskey]

    public init(userID: String?, userHandle: String?, rpID: String?, passkeys: [ExportedPasskey]) {
        self.userID = userID
        self.userHandle = userHandle
        self.rpID = rpID
        self.passkeys = passkeys
    }

    /// The members of an export's record (one line of `users export --all`), each of the type
    /// that export writes, or `malformed`; absent and `null` members are `nil`.
    public init(record: JSONValue) throws {
        func text(_ member: String) throws -> String? {
            guard let value = record[member], value != .null else { return nil }
            guard let text = value.string else { throw AuthError.malformed("\(member) must be a string") }
            return text
        }
        var passkeys: [ExportedPasskey] = []
        if let list = record["passkeys"], list != .null {
            guard list.array != nil, let decoded = try? JSONDecoder().decode([ExportedPasskey].self, from: Data(list.serialized.utf8)) else {
                throw AuthError.malformed("passkeys must be a list of passkeys as signet admin users export --all writes them")
            }
            passkeys = decoded
        }
        self.init(userID: try text("user_id"), userHandle: try text("user_handle"), rpID: try text("rp_id"), passkeys: passkeys)
    }
}

/// What an import carries over of an ``ExportedIdentity``, checked.
struct CarriedIdentity: Sendable {
    /// The account's ID, when the export's can be kept.
    var userID: String?
    var handle: [UInt8]?
    /// The passkeys, their owner filled in when the account is made.
    var passkeys: [CredentialRow]
    /// What was kept and left out, in words, for the report and the audit row.
    var notes: [String]

    var auditNote: String {
        (userID == nil ? "" : "ID kept; ") + (passkeys.isEmpty ? "" : "\(passkeys.count) passkey(s); ")
    }
}

/// An imported account and what came with it.
public struct ImportedAccount: Sendable {
    public let user: ManagementUser
    /// Whether the account has its ID from the export (the `sub` apps know it by).
    public let idKept: Bool
    /// How many passkeys came with it: its owner signs in with them as before.
    public let passkeys: Int
    /// What was left out, and why.
    public let notes: [String]
}

extension Ceremonies {
    /// The most passkeys one imported record may carry.
    public static let maxImportedPasskeys = 100

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
            return ImportedAccount(user: user, idKept: carried?.userID != nil, passkeys: carried?.passkeys.count ?? 0, notes: carried?.notes ?? [])
        } catch let error as StoreError where error.code == .conflict {
            throw AuthError(.conflict, "its user_handle (or, made meanwhile, its user_id) is another account's here")
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
        guard count > 0 else { return carried }
        guard count <= Self.maxImportedPasskeys else { throw AuthError.malformed("at most \(Self.maxImportedPasskeys) passkeys an account") }
        if carried.handle == nil {
            carried.notes.append("\(count) passkey(s) left out: without its user_handle they would not sign in")
        } else if given.rpID != configuration.rpID {
            carried.notes.append("\(count) passkey(s) left out: they are for RP ID \(given.rpID ?? "(none given)"), not \(configuration.rpID)")
        } else {
            let now = nowMillis
            carried.passkeys = try given.passkeys.map { try Self.importedPasskey($0, now: now) }
        }
        return carried
    }

    /// Whether `id` has the form of the IDs Signet gives (a UUID, lower case).
    static func isSignetUserID(_ id: String) -> Bool {
        id.utf8.count == 36 && UUID(uuidString: id) != nil && id == id.lowercased()
    }

    /// An exported passkey as the row a registration would have written, each value checked as
    /// registration checks it (WebAuthn L3 §7.1 steps 25 and 27; §5.8.5 for the key). Its
    /// attestation is not in the export, so it is not marked attested.
    package static func importedPasskey(_ p: ExportedPasskey, now: Int64) throws -> CredentialRow {
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
        return CredentialRow(
            id: id, userID: "", publicKey: raw, algorithm: p.algorithm, signCount: p.sign_count, aaguid: aaguid.uuidString.lowercased(),
            format: p.attestation_format, backupEligible: p.backup_eligible, backupState: p.backup_state, transports: storedTransports(p.transports),
            name: try displayName(p.name, member: "name", limit: 100), createdAt: try millis(p.created_at, "created_at") ?? now,
            lastUsedAt: try millis(p.last_used_at, "last_used_at"), revokedAt: try millis(p.revoked_at, "revoked_at"))
    }

    /// The transports kept of what a client says of a credential (WebAuthn L3 §5.2.1.3): hints
    /// for later ceremonies, so at most 8 of at most 32 bytes each.
    static func storedTransports(_ given: [String]) -> [String] {
        given.filter { $0.utf8.count <= 32 }.prefix(8).map { $0 }
    }
}
