import Foundation
public import SignetAPI

/// Auth0's `app_metadata` (the operators': roles, a plan) and `user_metadata` (the owner's:
/// preferences): a JSON object each, kept as text beside the account and read by no sign-in.
/// Numbers are JavaScript's (doubles), as they are at Auth0.
extension Ceremonies {
    /// The most one object may take as JSON text.
    public static let metadataLimit = 16 * 1024

    /// `patch` (an object) merged into `current` at its top level, as Auth0 does: a key set to
    /// `null` goes, any other replaces the key's value whole. `nil` when nothing is left.
    public static func mergedMetadata(_ current: String?, _ patch: JSONDocument, member: String) throws -> String? {
        guard case .object(let changes) = patch else { throw AuthError.malformed("\(member) must be a JSON object") }
        var merged: [String: JSONDocument] = [:]
        if case .object(let existing)? = metadataDocument(current) { merged = existing }
        for (key, value) in changes { merged[key] = value == .null ? nil : value }
        return try metadataText(merged, member: member)
    }

    /// An object's text for the database (keys sorted), or `nil` for an empty one; refused when
    /// a key is empty or longer than 200 characters, or the whole is over ``metadataLimit``.
    static func metadataText(_ object: [String: JSONDocument], member: String) throws -> String? {
        guard !object.isEmpty else { return nil }
        guard object.keys.allSatisfy({ !$0.isEmpty && $0.count <= 200 }) else { throw AuthError.malformed("\(member): each key must be 1 to 200 characters") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(JSONDocument.object(object)), data.count <= metadataLimit else {
            throw AuthError.malformed("\(member) must be at most \(metadataLimit / 1024) KiB of JSON")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The stored text as a document (`nil` for none, or for text that does not read).
    public static func metadataDocument(_ text: String?) -> JSONDocument? {
        text.flatMap { try? JSONDecoder().decode(JSONDocument.self, from: Data($0.utf8)) }
    }

    /// `GET /me/metadata`.
    public func accountMetadata(_ principal: Principal) throws -> AccountMetadata {
        let managed = try existingUser(principal.user.id)
        return AccountMetadata(app_metadata: Self.metadataDocument(managed.appMetadata), user_metadata: Self.metadataDocument(managed.userMetadata))
    }

    /// `PATCH /me/metadata {"user_metadata": {…}}`: merged into the account's (a key set to
    /// `null` goes), written only over what was read (else 409 `conflict`: read it again).
    public func updateUserMetadata(_ principal: Principal, _ patch: JSONDocument) throws -> AccountMetadata {
        let before = try existingUser(principal.user.id)
        let change = UserChange(userMetadata: MetadataChange(from: before.userMetadata, to: try Self.mergedMetadata(before.userMetadata, patch, member: "user_metadata")))
        guard let after = try store.updateUser(id: principal.user.id, change, at: nowMillis, writes: []) else {
            throw AuthError(.userUnknown, "the account is gone")
        }
        return AccountMetadata(app_metadata: Self.metadataDocument(after.appMetadata), user_metadata: Self.metadataDocument(after.userMetadata))
    }
}
