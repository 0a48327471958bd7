import Foundation
import SignetWebAuthn

/// `signet bench cpu`: how steadily this machine's processors run, without Signet.
///
/// On shared hardware the host can take a virtual processor away, or slow it, for milliseconds
/// at a time; the guest sees no idle time and no steal, only work that takes longer. One thread
/// per processor computes a fixed unit of work (about 100 µs, calibrated at the start) and rests
/// 0.2 ms after every second unit, so that the threads leave the machine about 40% idle, as the
/// sign-in load at 1,000 a second does. Each unit's time against the fastest one shows how
/// often, and for how long, the processors were slower than they can be; the 50-ms windows show
/// the slow stretches, in which a server falls behind and then catches up. A latency tail that
/// `bench login` prints in the same hour can then be told apart from the server's.
struct CPUBenchmark {
    var seconds = 10.0
    var threads = ProcessInfo.processInfo.activeProcessorCount
    var json = false

    static func run(_ args: [String]) -> Int32 {
        var bench = CPUBenchmark()
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--seconds": bench.seconds = try words.number(of: flag)
                case "--threads": bench.threads = try words.number(of: flag)
                case "--json": bench.json = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard bench.seconds > 0, bench.threads > 0 else { throw UsageProblem("--seconds and --threads must be positive") }
        } catch {
            return usageError("usage: signet bench cpu [--seconds S] [--threads N] [--json]", error)
        }
        let report = bench.measure()
        print(bench.json ? report.json.serialized : report.text)
        return 0
    }

    /// Each unit's time over the fastest unit of its thread, for every unit of every thread, and
    /// the mean of those ratios in each 50-ms window of each thread.
    struct Report {
        let ratios: [Double], windows: [Double], unitSeconds: Double, threads: Int, seconds: Double

        /// 50-ms windows whose units took, on average, more than 1.5 times the fastest.
        var slowWindows: Int { windows.filter { $0 > 1.5 }.count }
        var worstWindow: Double { windows.max() ?? 0 }

        func fraction(over ratio: Double) -> Double { ratios.isEmpty ? 0 : Double(ratios.filter { $0 > ratio }.count) / Double(ratios.count) }
        var p99: Double { ratios.isEmpty ? 0 : ratios.sorted()[min(ratios.count - 1, ratios.count * 99 / 100)] }
        var worst: Double { ratios.max() ?? 0 }
        /// Of the time the units took, the share beyond what they would have taken at full speed.
        var lost: Double {
            let total = ratios.reduce(0, +)
            return total > 0 ? (total - Double(ratios.count)) / total : 0
        }

        var json: JSONValue {
            func n(_ v: Double, _ digits: Int = 4) -> JSONValue { .number(String(format: "%.\(digits)f", v)) }
            return .object([
                "threads": .int(threads), "seconds": n(seconds, 1), "units": .int(ratios.count), "unit_us": n(unitSeconds * 1e6, 1),
                "slowed_2x_fraction": n(fraction(over: 2)), "slowed_5x_fraction": n(fraction(over: 5)), "p99_ratio": n(p99, 2),
                "worst_ratio": n(worst, 2), "worst_ms": n(worst * unitSeconds * 1000, 2), "lost_fraction": n(lost),
                "windows_50ms": .int(windows.count), "slow_windows": .int(slowWindows), "worst_window_ratio": n(worstWindow, 2),
            ])
        }

        var text: String {
            """
            signet bench cpu: \(threads) thread\(threads == 1 ? "" : "s") computing units of \(String(format: "%.0f", unitSeconds * 1e6)) µs, each resting 0.2 ms after every second unit, for \(String(format: "%.0f", seconds)) s
              units                                          \(ratios.count)
              slowed more than 2× / 5×                       \(String(format: "%.2f%% / %.2f%%", fraction(over: 2) * 100, fraction(over: 5) * 100))
              p99 / slowest unit                             \(String(format: "%.2f× / %.1f× (%.2f ms)", p99, worst, worst * unitSeconds * 1000))
              time beyond full speed                         \(String(format: "%.2f%%", lost * 100)) of the units' time
              50-ms windows at under 2/3 of full speed       \(slowWindows) of \(windows.count) (the slowest at \(String(format: "%.0f%%", worstWindow > 0 ? 100 / worstWindow : 0)))
            """
        }
    }

    /// A fixed amount of dependent arithmetic: `iterations` rounds of a multiply and an add.
    static func unit(_ iterations: Int, _ seed: UInt64) -> UInt64 {
        var x = seed
        for _ in 0..<iterations { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        return x
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func measure() -> Report {
        // Size the unit to about 100 µs: the fastest of five runs, so that a slow moment here
        // does not make it small.
        var sink: UInt64 = 0
        func fastest(_ iterations: Int) -> UInt64 {
            (0..<5).map { _ in
                let started = Self.now()
                sink ^= Self.unit(iterations, sink)
                return Self.now() - started
            }.min() ?? 1
        }
        var iterations = 1_000
        while fastest(iterations) < 50_000 && iterations < 1 << 30 { iterations *= 2 }
        iterations = max(1, Int(Double(iterations) * 100_000 / Double(max(1, fastest(iterations)))))
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var ratios: [Double] = []
            var windows: [Double] = []
            var fastest = UInt64.max
        }
        let collected = Collected()
        let group = DispatchGroup()
        let end = Self.now() + UInt64(seconds * 1e9)
        for t in 0..<threads {
            group.enter()
            let thread = Thread { [iterations] in
                var times: [UInt64] = []
                var starts: [UInt64] = []
                var x = UInt64(t + 1)
                let first = Self.now()
                while Self.now() < end {
                    for _ in 0..<2 {
                        let started = Self.now()
                        x ^= Self.unit(iterations, x)
                        times.append(Self.now() - started)
                        starts.append(started - first)
                    }
                    usleep(200)
                }
                let fastest = max(1, times.min() ?? 1)
                let ratios = times.map { Double($0) / Double(fastest) }
                var sums: [Int: (Double, Int)] = [:]
                for (ratio, start) in zip(ratios, starts) {
                    let window = Int(start / 50_000_000)
                    let (sum, count) = sums[window] ?? (0, 0)
                    sums[window] = (sum + ratio, count + 1)
                }
                collected.lock.lock()
                collected.ratios += ratios
                collected.windows += sums.values.map { $0.0 / Double($0.1) }
                collected.fastest = min(collected.fastest, fastest)
                collected.lock.unlock()
                if x == 0 { print(x) }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        if sink == 0 { print(sink) }
        return Report(ratios: collected.ratios, windows: collected.windows, unitSeconds: Double(collected.fastest) / 1e9, threads: threads, seconds: seconds)
    }
}
