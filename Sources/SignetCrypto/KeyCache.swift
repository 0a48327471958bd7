import Foundation

/// A bounded cache of parsed public keys keyed by their encoded bytes (a COSE key, an SPKI).
/// Importing a key costs more than a third of an ECDSA verification, and the same credential
/// signs in again and again.
public typealias KeyCache = BoundedCache<[UInt8], PublicKey>

/// Encoded key bytes as a cache key, hashed in one pass over the bytes. Through the cache's
/// generic code an array of bytes is hashed one element at a time, each through a witness
/// table: a sign-in's lookup of its 77-byte COSE key ran 8.2k instructions that way and 2.8k
/// this way (callgrind, `scripts/bench-callgrind.sh`).
public struct EncodedKey: Hashable, Sendable {
    /// The encoded key (a COSE key, an SPKI).
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// A thread-safe cache with a fixed capacity; when full, the oldest entry leaves first.
public final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [Key: Value] = [:]
    private var order: [Key] = []
    private var head = 0
    /// Most entries kept at once.
    public let capacity: Int

    public init(capacity: Int = 10_000) {
        precondition(capacity > 0)
        self.capacity = capacity
        order.reserveCapacity(capacity)
    }

    /// The cached value for `encoded`, or the one `make` builds, which is then cached.
    public func value(for encoded: Key, make: () throws -> Value) rethrows -> Value {
        lock.lock()
        if let hit = entries[encoded] {
            lock.unlock()
            return hit
        }
        lock.unlock()
        let key = try make()
        lock.lock()
        defer { lock.unlock() }
        if entries[encoded] == nil {
            if order.count < capacity {
                order.append(encoded)
            } else {
                entries[order[head]] = nil
                order[head] = encoded
                head = (head + 1) % capacity
            }
        }
        entries[encoded] = key
        return key
    }

    /// Number of cached values.
    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Drops every entry.
    public func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        entries.removeAll()
        order.removeAll(keepingCapacity: true)
        head = 0
    }
}
