import SignetStore
import Synchronization

/// What a sign-in verifies an assertion against (WebAuthn §7.2 steps 6 and 22): a passkey's
/// owner, user handle, public key and BE flag, none of which ever changes for a credential ID,
/// kept in memory so a sign-in needs no read before its one transaction. The counter kept here
/// is only the last one seen; revocation, deletion, a replaced key and the counter are all
/// checked again by the commit itself (``Store/completeSignIn(_:writes:)``), so an entry can be
/// stale without ever letting a refused sign-in through, also when several instances share a
/// database. Public keys and IDs only: nothing secret.
final class CredentialCache: Sendable {
    struct Entry: Sendable {
        let userID: String
        let userHandle: [UInt8]
        let publicKey: [UInt8]
        let backupEligible: Bool
        var signCount: Int64
    }

    private let entries = Mutex<[[UInt8]: Entry]>([:])
    /// Entries kept at most; past it an arbitrary one makes room (about 200 bytes each).
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    func entry(_ id: [UInt8]) -> Entry? {
        entries.withLock { $0[id] }
    }

    func store(_ id: [UInt8], _ entry: Entry) {
        entries.withLock { entries in
            if entries[id] == nil, entries.count >= capacity { entries.remove(at: entries.startIndex) }
            entries[id] = entry
        }
    }

    func remove(_ id: [UInt8]) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    func setSignCount(_ id: [UInt8], _ count: Int64) {
        entries.withLock { $0[id]?.signCount = count }
    }

    var count: Int { entries.withLock { $0.count } }
}

extension CredentialCache.Entry {
    init(_ row: CredentialRow, handle: [UInt8]) {
        self.init(userID: row.userID, userHandle: handle, publicKey: row.publicKey, backupEligible: row.backupEligible, signCount: row.signCount)
    }
}
