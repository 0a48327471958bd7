import Synchronization

/// What a sign-in verifies an assertion against (WebAuthn §7.2 steps 6 and 22): a passkey's
/// owner, user handle, public key and BE flag, none of which ever changes for a credential ID,
/// kept in memory so a sign-in needs no read before its one transaction. The counter kept here
/// is only the last one seen; revocation, deletion, a replaced key and the counter are all
/// checked again by the commit itself (``Store/completeSignIn(_:writes:)``), so an entry can be
/// stale without ever letting a refused sign-in through, also when several instances share a
/// database. Public keys and IDs only: nothing secret.
package final class CredentialCache: Sendable {
    package struct Entry: Sendable, Equatable {
        package let userID: String
        package let userHandle: [UInt8]
        package let publicKey: [UInt8]
        package let backupEligible: Bool
        package var signCount: Int64
        /// The authenticator's model, for the AAGUID policy (lower-case UUID text).
        package let aaguid: String
        /// ``Ceremonies/isHardwareBound(_:)``: its sign-ins add `hwk` to `amr`.
        package let hardwareBound: Bool

        package init(userID: String, userHandle: [UInt8], publicKey: [UInt8], backupEligible: Bool, signCount: Int64, aaguid: String = "",
                     hardwareBound: Bool = false) {
            self.userID = userID
            self.userHandle = userHandle
            self.publicKey = publicKey
            self.backupEligible = backupEligible
            self.signCount = signCount
            self.aaguid = aaguid
            self.hardwareBound = hardwareBound
        }
    }

    /// A credential ID, hashed as one run of bytes (an array of bytes hashes byte by byte).
    struct Key: Hashable {
        let id: [UInt8]
        func hash(into hasher: inout Hasher) { id.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    private let entries = Mutex<[Key: Entry]>([:])
    /// Entries kept at most; past it an arbitrary one makes room (about 200 bytes each).
    package let capacity: Int

    package init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    package func entry(_ id: [UInt8]) -> Entry? {
        entries.withLock { $0[Key(id: id)] }
    }

    package func store(_ id: [UInt8], _ entry: Entry) {
        entries.withLock { entries in
            if entries[Key(id: id)] == nil, entries.count >= capacity { entries.remove(at: entries.startIndex) }
            entries[Key(id: id)] = entry
        }
    }

    package func remove(_ id: [UInt8]) {
        _ = entries.withLock { $0.removeValue(forKey: Key(id: id)) }
    }

    package func setSignCount(_ id: [UInt8], _ count: Int64) {
        entries.withLock { $0[Key(id: id)]?.signCount = count }
    }

    /// Forgets every entry: each is read again at its next sign-in.
    package func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    package var count: Int { entries.withLock { $0.count } }
}

extension CredentialCache.Entry {
    init(_ row: CredentialRow, handle: [UInt8], hardwareBound: Bool) {
        self.init(userID: row.userID, userHandle: handle, publicKey: row.publicKey, backupEligible: row.backupEligible, signCount: row.signCount, aaguid: row.aaguid,
                  hardwareBound: hardwareBound)
    }
}
