import SignetCrypto
import Synchronization

/// The resource proofs this instance has seen, each until its `iat` window ends (RFC 9449
/// §11.1: a replay within the window is refused; across instances the token-endpoint proofs are
/// the ones made single use in the database).
///
/// Bounded in memory and in work: a proof is kept as 16 bytes of a hash, in a bucket of the
/// second it expires in, and the buckets that have expired are dropped once a second, so each
/// use is constant work however many proofs are live. Past `capacity` live proofs, or
/// `perHolder` of one account's, a new proof is refused, never let through unrecorded: a proof
/// the cache could not hold could be replayed.
package final class ProofReplayCache: Sendable {
    /// What a proof's use found.
    package enum Outcome: Equatable, Sendable {
        case fresh
        case replayed
        /// The cache, or the holder's share of it, is full; room frees in `retryAfter` seconds.
        case full(retryAfter: Int, holder: Bool)
    }

    struct Key: Hashable {
        var high: UInt64
        var low: UInt64
    }

    struct State {
        var expiries: [Key: Int64] = [:]
        /// By the second the proofs in it expire: each proof's key and its holder's.
        var buckets: [Int64: [(key: Key, holder: UInt64)]] = [:]
        var perHolder: [UInt64: Int] = [:]
        var purgedAt = Int64.min
    }

    private let state = Mutex(State())
    package let capacity: Int
    package let perHolder: Int

    package init(capacity: Int = 200_000, perHolder: Int = 6_000) {
        self.capacity = capacity
        self.perHolder = perHolder
    }

    /// Proofs held now.
    package var count: Int { state.withLock { $0.expiries.count } }

    /// Records the proof (`jkt`, `jti`) of `holder` (the token's subject) until `expiry`, unless
    /// it was seen already or there is no room.
    package func use(jkt: String, jti: String, holder: String, until expiry: Int64, now: Int64) -> Outcome {
        let key = Self.key(Digest.sha256.hash(Array("\(jkt) \(jti)".utf8)))
        let holderKey = Self.key(Digest.sha256.hash(Array("holder \(holder)".utf8))).high
        return state.withLock { state in
            if now > state.purgedAt { Self.purge(&state, now: now) }
            if let until = state.expiries[key], until > now { return .replayed }
            let held = state.perHolder[holderKey, default: 0]
            if state.expiries.count >= capacity || held >= perHolder {
                let soonest = state.buckets.keys.min() ?? now + 1
                return .full(retryAfter: Int(max(1, soonest - now)), holder: state.expiries.count < capacity)
            }
            state.expiries[key] = expiry
            state.buckets[expiry, default: []].append((key, holderKey))
            state.perHolder[holderKey] = held + 1
            return .fresh
        }
    }

    /// Drops every bucket that has expired by `now`: at most a window's worth of buckets to
    /// look at, once a second.
    static func purge(_ state: inout State, now: Int64) {
        state.purgedAt = now
        for second in state.buckets.keys.filter({ $0 <= now }) {
            for (key, holder) in state.buckets.removeValue(forKey: second) ?? [] {
                state.expiries[key] = nil
                let left = state.perHolder[holder, default: 1] - 1
                state.perHolder[holder] = left > 0 ? left : nil
            }
        }
    }

    static func key(_ digest: [UInt8]) -> Key {
        func word(_ at: Int) -> UInt64 { digest[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        return Key(high: word(0), low: word(8))
    }
}
