import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// Erasing an account, by its owner (`DELETE /me`, the account page) or by an operator
/// (`DELETE /api/v2/users/{id}`, `signet admin users delete`): every row bound to it goes in one
/// transaction, and the audit trail keeps its events under a pseudonym.
extension Ceremonies {
    /// The stable stand-in for an erased account's ID in the audit trail: an HMAC under a key
    /// derived from the key-encryption key, so the events of one account still read together.
    func pseudonym(of userID: String) -> String {
        "deleted:" + Base64URL.encode(Array(Digest.sha256.hmac(key: pseudonymKey, data: Array(userID.utf8)).prefix(12)))
    }

    /// Erases `userID` with `writes` (its audit row, a farewell notice), and forgets its cached
    /// passkeys; `false` when there is no such account.
    func erase(userID: String, writes: (_ pseudonym: String) -> [StoreWrite]) throws -> Bool {
        let passkeys = try store.credentials(userID: userID).map(\.id)
        let pseudonym = pseudonym(of: userID)
        // A pending address change is kept under the new address, not the account's: it goes too.
        let held: [StoreWrite] = [.discardEmailCodes(holder: Self.emailChangeHolder(userID))]
        guard try store.deleteUser(id: userID, pseudonym: pseudonym, at: nowMillis, writes: held + writes(pseudonym)) else { return false }
        for id in passkeys { credentialCache.remove(id) }
        return true
    }

    /// `DELETE /me` (step-up): the owner erases the account. Refused to a session a recovery
    /// holds, which may not undo what the account had before it; the address hears of it, as the
    /// last message it gets from this service.
    public func deleteAccount(_ principal: Principal, context: RequestContext) throws {
        let user = principal.user
        if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
        let erased = try erase(userID: user.id) { pseudonym in
            [.audit(auditEvent(.accountDeleted, user: pseudonym, client: principal.clientID, context: context))] + notice(.accountDeleted, to: user)
        }
        guard erased else { throw AuthError(.userUnknown, "the account is already gone") }
    }
}
