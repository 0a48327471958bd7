import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// A scheduled signing-key rotation in the store: one transaction that adds the key and retires
/// the others only when no key is newer than the cut, so instances that find it due together
/// add one key between them.
@Suite struct SigningKeyStoreTests {
    func key(_ kid: String, at: Int64) -> SigningKeyRow {
        SigningKeyRow(kid: kid, algorithm: "ES256", encryptedPrivateKey: [1, 2, 3], publicKey: [4, 5, 6], createdAt: at)
    }

    @Test("a rotation adds its key and retires the others at its time, unless a key is newer than the cut", arguments: Backend.available)
    func conditional(_ backend: Backend) throws {
        let store = try backend.open()
        try store.insertSigningKey(key("a", at: 1_000))
        #expect(try !store.rotateSigningKey(key("b", at: 5_000), unlessCreatedAfter: 999))
        #expect(try store.signingKeys().map(\.kid) == ["a"])
        #expect(try store.rotateSigningKey(key("b", at: 5_000), unlessCreatedAfter: 1_000))
        let rows = try store.signingKeys()
        #expect(rows.map(\.kid) == ["a", "b"] && rows.map(\.retiredAt) == [5_000, nil])
        // A key retired before keeps its time.
        #expect(try store.rotateSigningKey(key("c", at: 9_000), unlessCreatedAfter: 5_000))
        #expect(try store.signingKeys().map(\.retiredAt) == [5_000, 9_000, nil])
    }

    @Test("a rotation past the limit of keys held is refused with nothing written, retired keys counting until deleted; of 8 at once from one under it, one adds its key",
          arguments: Backend.available)
    func limit(_ backend: Backend) throws {
        let store = try backend.open()
        func audited() throws -> Int { try store.auditEvents(limit: 50).filter { $0.kind == "signing_key_rotated" }.count }
        let row = AuditEvent(at: 1, kind: "signing_key_rotated", outcome: "success")
        try store.insertSigningKey(key("k0", at: 1_000))
        for i in 1..<4 { #expect(try store.rotateSigningKey(key("k\(i)", at: 1_000 + Int64(i)), unlessCreatedAfter: .max, limit: 4, writes: [.audit(row)])) }
        #expect { try store.rotateSigningKey(key("k4", at: 2_000), unlessCreatedAfter: .max, limit: 4, writes: [.audit(row)]) } throws: {
            ($0 as? StoreError)?.code == .signingKeyLimit
        }
        // Nothing written: no key, no retirement of the one that signs, no audit row.
        let rows = try store.signingKeys()
        #expect(try rows.map(\.kid) == ["k0", "k1", "k2", "k3"] && rows.last?.retiredAt == nil && audited() == 3)
        // A retired key deleted makes room for one.
        #expect(try store.revokeSigningKey(kid: "k0", writes: []))
        #expect(try store.rotateSigningKey(key("k4", at: 2_000), unlessCreatedAfter: .max, limit: 4, writes: [.audit(row)]))
        // Three held, room for one under a limit of 4: of 8 rotations at once, one adds its key, the others are refused.
        #expect(try store.deleteSigningKeys(retiredBefore: 1_004) == ["k1", "k2"])
        #expect(try store.signingKeys().count == 2)
        let results = simultaneously(8) { i in try store.rotateSigningKey(self.key("r\(i)", at: 3_000 + Int64(i)), unlessCreatedAfter: .max, limit: 3, writes: []) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1, "\(results)")
        #expect(results.filter { if case .failure(let e) = $0 { (e as? StoreError)?.code == .signingKeyLimit } else { false } }.count == 7, "\(results)")
        #expect(try store.signingKeys().count == 3)
    }

    @Test("of 16 rotations found due at once, one adds its key", arguments: Backend.available)
    func once(_ backend: Backend) throws {
        let store = try backend.open()
        try store.insertSigningKey(key("first", at: 1_000))
        let results = simultaneously(16) { i in try store.rotateSigningKey(self.key("k\(i)", at: 2_000 + Int64(i)), unlessCreatedAfter: 1_000) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1)
        #expect(results.allSatisfy { (try? $0.get()) != nil }, "\(results)")
        let rows = try store.signingKeys()
        #expect(rows.count == 2 && rows.filter { $0.retiredAt == nil }.count == 1)
    }

    @Test("deleting retired keys: only those retired before the cut, never one in use; each reported once, also when instances do it at once", arguments: Backend.available)
    func deleteRetired(_ backend: Backend) throws {
        let store = try backend.open()
        try store.insertSigningKey(key("a", at: 1_000))
        for (kid, at) in [("b", Int64(2_000)), ("c", 3_000), ("d", 4_000)] {
            #expect(try store.rotateSigningKey(key(kid, at: at), unlessCreatedAfter: at - 1))
        }
        // Retired at 2,000 (a), 3,000 (b) and 4,000 (c); d signs.
        #expect(try store.deleteSigningKeys(retiredBefore: 2_000) == [])
        #expect(try store.deleteSigningKeys(retiredBefore: 3_001) == ["a", "b"])
        #expect(try store.signingKeys().map(\.kid) == ["c", "d"])
        #expect(try store.deleteSigningKeys(retiredBefore: .max) == ["c"])
        #expect(try store.signingKeys().map(\.kid) == ["d"])
        for i in 0..<8 { #expect(try store.rotateSigningKey(key("e\(i)", at: 5_000 + Int64(i)), unlessCreatedAfter: 4_999 + Int64(i))) }
        let results = simultaneously(8) { _ in try store.deleteSigningKeys(retiredBefore: .max) }
        let deleted = results.compactMap { try? $0.get() }.flatMap { $0 }
        #expect(results.allSatisfy { (try? $0.get()) != nil }, "\(results)")
        #expect(deleted.sorted() == ["d"] + (0..<7).map { "e\($0)" }, "\(deleted)")
        #expect(try store.signingKeys().map(\.kid) == ["e7"])
    }

    @Test("revoking a key: gone with its audit row in one transaction, never the last key not retired; of 8 revocations of one key at once, one deletes it", arguments: Backend.available)
    func revoke(_ backend: Backend) throws {
        let store = try backend.open()
        @Sendable func audit(_ kid: String) -> StoreWrite {
            .audit(AuditEvent(at: 1, kind: "signing_key_revoked", outcome: "success", detail: "kid \(kid)"))
        }
        func audited() throws -> [String] { try store.auditEvents(limit: 50).filter { $0.kind == "signing_key_revoked" }.compactMap(\.detail) }
        try store.insertSigningKey(key("a", at: 1_000))
        // The only key: refused, kept, nothing audited.
        #expect { try store.revokeSigningKey(kid: "a", writes: [audit("a")]) } throws: { ($0 as? StoreError)?.code == .conflict }
        #expect(try store.signingKeys().map(\.kid) == ["a"] && audited().isEmpty)
        #expect(try !store.revokeSigningKey(kid: "none", writes: [audit("none")]) && audited().isEmpty)
        #expect(try store.rotateSigningKey(key("b", at: 2_000), unlessCreatedAfter: 1_999))
        #expect(try store.rotateSigningKey(key("c", at: 3_000), unlessCreatedAfter: 2_999))
        // b signs (retired at c's making), c is not retired: b may go, then a; c may not.
        let results = simultaneously(8) { _ in try store.revokeSigningKey(kid: "b", writes: [audit("b")]) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1 && results.allSatisfy { (try? $0.get()) != nil }, "\(results)")
        #expect(try audited() == ["kid b"])
        #expect(try store.revokeSigningKey(kid: "a", writes: [audit("a")]))
        #expect { try store.revokeSigningKey(kid: "c", writes: [audit("c")]) } throws: { ($0 as? StoreError)?.code == .conflict }
        #expect(try store.signingKeys().map(\.kid) == ["c"] && audited().sorted() == ["kid a", "kid b"])
    }
}
