import Foundation
import SignetCrypto
import Testing

@Suite struct DigestAndRandomTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// FIPS 180-2 "abc" vectors.
    @Test("SHA-1/256/384/512 known answers")
    func knownAnswers() {
        let abc = Array("abc".utf8)
        #expect(Self.hex(Digest.sha1.hash(abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Self.hex(Digest.sha256.hash(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(Digest.sha384.hash(abc)).hasPrefix("cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"))
        #expect(Self.hex(Digest.sha512.hash(abc)).hasPrefix("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"))
        #expect(Digest.sha256.hash(abc[...]) == Digest.sha256.hash(abc))
    }

    /// RFC 4231 test case 2.
    @Test("HMAC-SHA-256 known answer")
    func hmac() {
        let mac = Digest.sha256.hmac(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(Self.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("random bytes differ between calls and have the asked length")
    func random() {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
    }

    @Test("pooled draws, across block refills and from several threads, never repeat and look uniform")
    func randomPool() {
        // 16-byte draws from 4 threads: 4 × 2,000 × 16 bytes cross many 1 KiB blocks.
        final class Box: @unchecked Sendable {
            let lock = NSLock()
            var draws: [[UInt8]] = []
        }
        let box = Box()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [[UInt8]] = []
            for i in 0..<2000 { mine.append(SecureRandom.bytes(1 + i % 64)) }
            box.lock.lock()
            box.draws += mine
            box.lock.unlock()
        }
        #expect(box.draws.allSatisfy { !$0.isEmpty && $0.count <= 64 })
        let long = box.draws.filter { $0.count >= 16 }
        #expect(Set(long).count == long.count, "a draw repeated")
        // Bit balance over all drawn bytes: within 1% of half.
        let bits = box.draws.joined().reduce(0) { $0 + $1.nonzeroBitCount }
        let total = box.draws.joined().count * 8
        #expect(abs(Double(bits) / Double(total) - 0.5) < 0.01)
        #expect(SecureRandom.bytes(65).count == 65 && SecureRandom.bytes(4096).count == 4096)
    }

    @Test("a forked child counts one fork more than its parent, and a pool of another fork count draws a fresh block")
    func forkedChild() throws {
        #expect(SecureRandom.forkHandler)
        let parent = SecureRandom.forkCount
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let pid = fork()
        if pid == 0 {
            // The child: no locks, no allocation; report the counter and leave.
            var seen = SecureRandom.forkCount
            _ = withUnsafeBytes(of: &seen) { write(fds[1], $0.baseAddress, 8) }
            _exit(0)
        }
        #expect(pid > 0)
        close(fds[1])
        var seen: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &seen) { read(fds[0], $0.baseAddress, 8) }
        close(fds[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(n == 8 && seen == parent + 1)
        #expect(SecureRandom.forkCount == parent)

        var pool = SecureRandom.Pool()
        let first = pool.take(16, generation: 0)
        let second = pool.take(16, generation: 0)
        #expect(pool.used == 32 && first != second)
        // Another fork count: the block is drawn again, not continued.
        let child = pool.take(16, generation: 1)
        #expect(pool.used == 16 && pool.generation == 1 && child != second)
    }

    @Test("constant-time comparison")
    func constantTime() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([UInt8](), []))
    }
}

@Suite struct AESGCMTests {
    @Test("seal and open; any altered byte, wrong key or wrong AAD is refused")
    func roundTrip() throws {
        let key = SecureRandom.bytes(32)
        let sealed = try AESGCM.seal(Array("private key bytes".utf8), key: key, aad: Array("kid-1".utf8))
        #expect(try AESGCM.open(sealed, key: key, aad: Array("kid-1".utf8)) == Array("private key bytes".utf8))
        #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: SecureRandom.bytes(32), aad: Array("kid-1".utf8)) }
        #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: key, aad: Array("kid-2".utf8)) }
        for index in [0, 12, sealed.count - 1] {
            var bent = sealed
            bent[index] ^= 1
            #expect(throws: CryptoError.self) { try AESGCM.open(bent, key: key, aad: Array("kid-1".utf8)) }
        }
        #expect(throws: CryptoError.self) { try AESGCM.open([1, 2, 3], key: key) }
        #expect(try AESGCM.seal([], key: key).count == 28)
    }
}
