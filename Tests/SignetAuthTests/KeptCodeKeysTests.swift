import SignetAuth
import SignetCrypto
import Testing

/// Which earlier code keys a re-key keeps (``KeyEncryptionKey/keptCodeKeys(old:kept:inUse:)``):
/// the old key-encryption key's always, an earlier one only while an unused recovery code may
/// need it.
@Suite struct KeptCodeKeysTests {
    let old = SecureRandom.bytes(32)
    let first = SecureRandom.bytes(32)
    let second = SecureRandom.bytes(32)
    var current: [UInt8] { KeyEncryptionKey.codeKey(old) }
    func id(_ key: [UInt8]) -> String { KeyEncryptionKey.id(key) }

    @Test("never re-keyed: codes without an ID are the old key's, and get its ID; the old key is kept even when no code needs it")
    func firstRekey() {
        let labelled = KeyEncryptionKey.keptCodeKeys(old: old, kept: [], inUse: [""])
        #expect(labelled.keys == [id(current): current] && labelled.ids == [id(current)] && labelled.unlabelled == id(current))
        let none = KeyEncryptionKey.keptCodeKeys(old: old, kept: [], inUse: [])
        #expect(none.keys == [id(current): current] && none.ids == [id(current)])
    }

    @Test("an earlier code key stays while an unused code names it, and goes when none does")
    func pruned() {
        let kept = KeyEncryptionKey.keptCodeKeys(old: old, kept: [first, second], inUse: [id(first), id(current)])
        #expect(kept.keys == [id(current): current, id(first): first] && kept.ids == [id(current), id(first)] && kept.unlabelled == nil)
        let none = KeyEncryptionKey.keptCodeKeys(old: old, kept: [first, second], inUse: [])
        #expect(none.keys == [id(current): current])
    }

    @Test("after a re-key, a code without an ID may be under any earlier key: all are kept, and such codes stay allowed")
    func unlabelledAfterRekey() {
        let kept = KeyEncryptionKey.keptCodeKeys(old: old, kept: [first, second], inUse: [""])
        #expect(kept.keys == [id(current): current, id(first): first, id(second): second])
        #expect(kept.ids == ["", id(current), id(first), id(second)] && kept.unlabelled == nil)
    }

    @Test("a code under a key no one kept is left as it is: it does not stop the re-key")
    func orphan() {
        let kept = KeyEncryptionKey.keptCodeKeys(old: old, kept: [first], inUse: ["lost"])
        #expect(kept.keys == [id(current): current] && kept.ids == ["lost", id(current)])
    }
}
