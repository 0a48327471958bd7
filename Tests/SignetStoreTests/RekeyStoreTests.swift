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
}
