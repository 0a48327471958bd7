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

    /// The entries, and how many times ``removeAll()`` has emptied them: an entry made from
    /// what was read before the last emptying is not kept (``entry(_:orMake:)``).
    private struct State {
        var entries: [Key: Entry] = [:]
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Entries kept at most; past it an arbitrary one makes room (about 200 bytes each).
    package let capacity: Int

    package init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    package func entry(_ id: [UInt8]) -> Entry? {
        state.withLock { $0.entries[Key(id: id)] }
    }

    /// The entry for `id` from memory (`cached`), or else the one `make` reads and judges, kept
    /// unless ``removeAll()`` ran while it was made: the entry may then have been judged by what
    /// that emptying replaced (the attestation metadata in force, for its hardware mark), and it
    /// is made again at its next sign-in instead.
    package func entry(_ id: [UInt8], orMake make: () throws -> Entry) rethrows -> (entry: Entry, cached: Bool) {
        if let entry = entry(id) { return (entry, true) }
        let generation = state.withLock { $0.generation }
        let entry = try make()
        store(id, entry, ifGeneration: generation)
        return (entry, false)
    }

    /// Keeps `entry` for `id`; with `generation`, only while the cache has not been emptied since.
    package func store(_ id: [UInt8], _ entry: Entry, ifGeneration generation: UInt64? = nil) {
        state.withLock { state in
            if let generation, generation != state.generation { return }
            if state.entries[Key(id: id)] == nil, state.entries.count >= capacity { state.entries.remove(at: state.entries.startIndex) }
            state.entries[Key(id: id)] = entry
        }
    }

    package func remove(_ id: [UInt8]) {
        _ = state.withLock { $0.entries.removeValue(forKey: Key(id: id)) }
    }

    package func setSignCount(_ id: [UInt8], _ count: Int64) {
        state.withLock { $0.entries[Key(id: id)]?.signCount = count }
    }

    /// Forgets every entry: each is read again at its next sign-in, also one being read now.
    package func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.generation &+= 1
        }
    }

    package var count: Int { state.withLock { $0.entries.count } }
}

extension CredentialCache.Entry {
    init(_ row: CredentialRow, handle: [UInt8], hardwareBound: Bool) {
        self.init(userID: row.userID, userHandle: handle, publicKey: row.publicKey, backupEligible: row.backupEligible, signCount: row.signCount, aaguid: row.aaguid,
                  hardwareBound: hardwareBound)
    }
}
