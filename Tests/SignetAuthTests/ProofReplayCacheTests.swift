import SignetAuth
import Testing

/// The resource-proof cache (``ProofReplayCache``): a proof once within its window, bounded room,
/// and room back when proofs expire.
@Suite struct ProofReplayCacheTests {
    @Test("a proof is fresh once and a replay until it expires; then it is forgotten")
    func replay() {
        let cache = ProofReplayCache()
        #expect(cache.use(jkt: "k", jti: "1", holder: "a", until: 161, now: 100) == .fresh)
        #expect(cache.use(jkt: "k", jti: "1", holder: "a", until: 161, now: 160) == .replayed)
        // The same jti under another key is another proof.
        #expect(cache.use(jkt: "other", jti: "1", holder: "a", until: 161, now: 160) == .fresh)
        #expect(cache.count == 2)
        #expect(cache.use(jkt: "k", jti: "2", holder: "a", until: 222, now: 161) == .fresh)
        #expect(cache.count == 1, "the two that expired at 161 are gone")
    }

    @Test("one holder's proofs are bounded, others' are not; a replay stays a replay; room comes back as they expire")
    func perHolder() {
        let cache = ProofReplayCache(capacity: 100, perHolder: 3)
        for (n, expiry) in [150, 160, 170].enumerated() {
            #expect(cache.use(jkt: "k", jti: "\(n)", holder: "a", until: Int64(expiry), now: 100) == .fresh)
        }
        #expect(cache.use(jkt: "k", jti: "3", holder: "a", until: 170, now: 100) == .full(retryAfter: 50, holder: true))
        #expect(cache.use(jkt: "k", jti: "0", holder: "a", until: 150, now: 100) == .replayed)
        #expect(cache.use(jkt: "k", jti: "3", holder: "b", until: 170, now: 100) == .fresh)
        // The first expires at 150: room for one more, not two.
        #expect(cache.use(jkt: "k", jti: "4", holder: "a", until: 210, now: 150) == .fresh)
        #expect(cache.use(jkt: "k", jti: "5", holder: "a", until: 210, now: 150) == .full(retryAfter: 10, holder: true))
    }

    @Test("past its capacity the cache refuses new proofs rather than forget live ones, and says when room frees")
    func capacity() {
        let cache = ProofReplayCache(capacity: 4, perHolder: 100)
        for n in 0..<4 { #expect(cache.use(jkt: "k", jti: "\(n)", holder: "h\(n)", until: 130 + Int64(n), now: 100) == .fresh) }
        #expect(cache.use(jkt: "k", jti: "4", holder: "new", until: 160, now: 100) == .full(retryAfter: 30, holder: false))
        #expect(cache.use(jkt: "k", jti: "1", holder: "h1", until: 131, now: 100) == .replayed)
        #expect(cache.count == 4)
        #expect(cache.use(jkt: "k", jti: "4", holder: "new", until: 160, now: 131) == .fresh)
        #expect(cache.count == 3)
    }

    @Test("under a steady stream the cache holds one window's proofs, not more")
    func steady() {
        let cache = ProofReplayCache(capacity: 1_000_000, perHolder: 1_000_000)
        for second in Int64(0)..<300 {
            for n in 0..<100 { #expect(cache.use(jkt: "k", jti: "\(second)-\(n)", holder: "h", until: second + 61, now: second) == .fresh) }
        }
        #expect(cache.count == 6_100)
    }
}
