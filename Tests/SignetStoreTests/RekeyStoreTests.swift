import Foundation
import SignetAuth
import SignetCrypto
import SignetStore
import Testing

/// The store's half of a re-key (``Store/rekey(_:from:)``): all or nothing.
@Suite struct RekeyStoreTests {
    @Test("a signing key or a message written under the old key during the re-key: a conflict, and nothing changes", arguments: Backend.available)
    func writtenMeanwhile(_ backend: Backend) throws {
        let store = try backend.open()
        let kek = SecureRandom.bytes(32)
        _ = try KeyRing(store: store, kek: kek, retentionSeconds: 60)
        let read = try store.sealedMaterial()
        var change = read
        for kid in change.signingKeys.keys { change.signingKeys[kid] = [1, 2, 3] }
        change.keys = [SealedKeyRow(name: "kek-check", sealed: [9], createdAt: 0)]
        try KeyRing.create(store: store, kek: kek, retireOthers: false)
        #expect { try store.rekey(change, from: read) } throws: { ($0 as? StoreError)?.code == .conflict }
        let after = try store.sealedMaterial()
        #expect(after.keys == read.keys && after.signingKeys.count == read.signingKeys.count + 1)
        #expect(read.signingKeys.allSatisfy { after.signingKeys[$0.key] == $0.value })
        // A message queued meanwhile.
        let reread = try store.sealedMaterial()
        change = reread
        try store.perform([.mail(OutboxRow(id: "m-\(UUID().uuidString)", kind: "otp", recipient: "x@signet.test", message: [7], createdAt: 0, dueAt: 0))])
        #expect { try store.rekey(change, from: reread) } throws: { ($0 as? StoreError)?.code == .conflict }
        change.messages = try store.sealedMaterial().messages
        try store.rekey(change, from: try store.sealedMaterial())
    }

    @Test("log streams' headers and signing secrets are sealed again; a stream given either during the re-key: a conflict, and nothing changes", arguments: Backend.available)
    func logStreams(_ backend: Backend) throws {
        let store = try backend.open()
        _ = try KeyRing(store: store, kek: SecureRandom.bytes(32), retentionSeconds: 60)
        let first = LogStreamRow(id: "lst_a", name: "a", status: "active", endpoint: "https://siem.example/a", contentType: "application/json",
                                 contentFormat: "JSONARRAY", authorization: [1], signing: [2], createdAt: now())
        _ = try store.insertLogStream(first, writes: [])
        var second = first
        (second.id, second.authorization) = ("lst_b", nil)
        _ = try store.insertLogStream(second, writes: [])
        let read = try store.sealedMaterial()
        #expect(read.logStreamAuthorizations == ["lst_a": [1]] && read.logStreamSigning == ["lst_a": [2], "lst_b": [2]])
        var change = read
        change.keys = [SealedKeyRow(name: "kek-check", sealed: [9], createdAt: 0)]
        (change.logStreamAuthorizations, change.logStreamSigning) = (["lst_a": [11]], ["lst_a": [12], "lst_b": [22]])
        // A third stream, with a secret sealed under the old key, written after the read.
        var third = first
        (third.id, third.authorization) = ("lst_c", nil)
        _ = try store.insertLogStream(third, writes: [])
        #expect { try store.rekey(change, from: read) } throws: { ($0 as? StoreError)?.code == .conflict }
        #expect(try store.sealedMaterial().logStreamSigning == ["lst_a": [2], "lst_b": [2], "lst_c": [2]])
        #expect(try store.deleteLogStream(id: "lst_c", writes: []))
        try store.rekey(change, from: try store.sealedMaterial())
        let after = try store.sealedMaterial()
        #expect(after.logStreamAuthorizations == ["lst_a": [11]] && after.logStreamSigning == ["lst_a": [12], "lst_b": [22]])
    }
}

/// The code keys that unused recovery codes need, as the store reads them and guards them in a
/// re-key.
@Suite struct CodeKeyIDStoreTests {
    @Test("unused codes carry their key's ID; a re-key that keeps none for one is a conflict and changes nothing; a used code needs none", arguments: Backend.available)
    func guarded(_ backend: Backend) throws {
        let store = try backend.open()
        _ = try KeyRing(store: store, kek: SecureRandom.bytes(32), retentionSeconds: 60)
        let (a, b) = (user(1), user(2))
        try store.createUser(a, credential: credential(a.id))
        try store.createUser(b, credential: credential(b.id))
        try store.replaceRecoveryCodes(userID: a.id, hashes: [[1], [2]], keyID: "k1", at: now(), writes: [])
        try store.replaceRecoveryCodes(userID: b.id, hashes: [[3]], keyID: "k2", at: now(), writes: [])
        #expect(try store.recoveryCodes(userID: a.id).map(\.keyID) == ["k1", "k1"])
        let read = try store.sealedMaterial()
        #expect(read.codeKeyIDs == ["k1", "k2"])
        #expect(try Set(store.codeKeyUsage().map { "\($0.keyID ?? "-") \($0.codes) \($0.accounts)" }) == ["k1 2 1", "k2 1 1"])
        var change = read
        change.keys = [SealedKeyRow(name: "kek-check", sealed: [9], createdAt: 0)]
        change.codeKeyIDs = ["k1"]
        #expect { try store.rekey(change, from: read) } throws: { ($0 as? StoreError)?.code == .conflict }
        #expect(try store.sealedKeys() == read.keys)
        try store.perform([.useRecoveryCode(userID: b.id, hash: [3], at: now())])
        let reread = try store.sealedMaterial()
        #expect(try reread.codeKeyIDs == ["k1"] && store.codeKeyUsage() == [CodeKeyUsage(keyID: "k1", codes: 2, accounts: 1)])
        try store.rekey(change, from: reread)
        #expect(try store.sealedKeys() == change.keys)
    }
}
