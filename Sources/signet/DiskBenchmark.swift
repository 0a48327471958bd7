import Foundation
import SignetWebAuthn
#if canImport(Glibc)
import Glibc
#endif

/// `signet bench disk`: what a durable commit's `fdatasync` costs on this disk, without Signet.
///
/// A loop rewrites 8 KiB of a file (as a WAL that has started over does) and syncs it, at about
/// `rate` calls per second, and reports each call's latency and the thread's CPU per call; then
/// the same with writes that make the file longer, as a WAL that grows does. `--busy N` keeps N
/// threads spinning meanwhile: whether the disk's latency depends on the processors being busy.
struct DiskBenchmark {
    var directory = FileManager.default.temporaryDirectory.path
    var seconds = 10.0
    var rate = 1000.0
    var busy = 0
    var json = false

    static func run(_ args: [String]) -> Int32 {
        var bench = DiskBenchmark()
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--path": bench.directory = try words.value(of: flag)
                case "--seconds": bench.seconds = try words.number(of: flag)
                case "--rate": bench.rate = try words.number(of: flag)
                case "--busy": bench.busy = try words.number(of: flag)
                case "--json": bench.json = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard bench.seconds > 0, bench.rate > 0, bench.busy >= 0 else { throw UsageProblem("--seconds and --rate must be positive, --busy at least 0") }
        } catch {
            return usageError("usage: signet bench disk [--path DIR] [--seconds S] [--rate PER_S] [--busy THREADS] [--json]", error)
        }
        return benchStatus("disk") {
            let report = try bench.measure()
            print(bench.json ? report.json.serialized : report.text)
            return 0
        }
    }

    typealias Failure = LoginBenchmark.Failure

    /// One pass: latencies in seconds and CPU seconds per call.
    struct Pass {
        var latencies: [Double]
        var cpuPerCall: Double

        func percentile(_ p: Double) -> Double {
            let sorted = latencies.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        func over(_ seconds: Double) -> Int { latencies.filter { $0 > seconds }.count }
    }

    struct Report {
        let rewrite: Pass, append: Pass, busy: Int, rate: Double

        var json: JSONValue {
            func n(_ v: Double, _ digits: Int = 3) -> JSONValue { .number(String(format: "%.\(digits)f", v)) }
            func pass(_ p: Pass) -> JSONValue {
                var object: JSONObject = ["calls": .int(p.latencies.count), "over_5ms": .int(p.over(0.005)), "over_50ms": .int(p.over(0.05))]
                object["p50_ms"] = n(p.percentile(0.5) * 1000)
                object["p99_ms"] = n(p.percentile(0.99) * 1000)
                object["max_ms"] = n((p.latencies.max() ?? 0) * 1000)
                object["cpu_us_per_call"] = n(p.cpuPerCall * 1e6, 1)
                return .object(object)
            }
            return .object(["rewrite": pass(rewrite), "append": pass(append), "busy_threads": .int(busy), "rate_per_s": n(rate, 0)])
        }

        var text: String {
            func line(_ name: String, _ p: Pass) -> String {
                String(format: "  %@  %6d calls   p50 %.2f ms   p99 %.2f ms   max %.1f ms   %d over 5 ms, %d over 50 ms   CPU %.1f µs a call",
                       name, p.latencies.count, p.percentile(0.5) * 1000, p.percentile(0.99) * 1000, (p.latencies.max() ?? 0) * 1000,
                       p.over(0.005), p.over(0.05), p.cpuPerCall * 1e6)
            }
            return """
                signet bench disk: 8 KiB write + fdatasync, about \(Int(rate)) a second\(busy > 0 ? ", \(busy) busy thread\(busy == 1 ? "" : "s") beside it" : "")
                \(line("rewriting in place (a WAL that started over)", rewrite))
                \(line("making the file longer (a WAL that grows)    ", append))
                """
        }
    }

    func measure() throws -> Report {
        // Spinners that stop by themselves when the passes are done.
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1.05e9)
        for _ in 0..<busy {
            Thread {
                var x: UInt64 = 1
                while DispatchTime.now().uptimeNanoseconds < end {
                    for _ in 0..<10_000 { x = x &* 6_364_136_223_846_793_005 &+ 1 }
                }
                if x == 0 { print(x) }
            }.start()
        }
        let rewrite = try pass(append: false, seconds: seconds * 0.7)
        let append = try pass(append: true, seconds: seconds * 0.3)
        return Report(rewrite: rewrite, append: append, busy: busy, rate: rate)
    }

    private func pass(append: Bool, seconds: Double) throws -> Pass {
        let path = directory + "/signet-bench-disk-\(getpid())"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): errno \(errno)") }
        defer {
            close(fd)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5a, count: 8192)
        let slots = 1024
        if !append {
            // The blocks exist on disk before the pass, as a WAL's do after its first round.
            for slot in 0..<slots { guard pwrite(fd, block, block.count, off_t(slot * block.count)) == block.count else { throw Failure(description: "write failed") } }
            guard fsync(fd) == 0 else { throw Failure(description: "fsync failed: errno \(errno)") }
        }
        let interval = 1 / rate
        var latencies: [Double] = []
        let deadline = Date().addingTimeInterval(seconds)
        var syncCPU = 0.0
        var n = 0
        while Date() < deadline {
            let started = Date()
            let cpu = LoginBenchmark.threadCPU()
            let offset = off_t((append ? n : n % slots) * block.count)
            guard pwrite(fd, block, block.count, offset) == block.count, fdatasync(fd) == 0 else { throw Failure(description: "write or sync failed: errno \(errno)") }
            syncCPU += LoginBenchmark.threadCPU() - cpu
            let took = Date().timeIntervalSince(started)
            latencies.append(took)
            n += 1
            if took < interval { usleep(UInt32((interval - took) * 1e6)) }
        }
        return Pass(latencies: latencies, cpuPerCall: n > 0 ? syncCPU / Double(n) : 0)
    }
}
