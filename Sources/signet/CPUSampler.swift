import Foundation

/// Reads the servers' CPU seconds once a second while a load runs, and afterwards gives the
/// CPU per sign-in of each one-second window: a window's CPU over the sign-ins that ended in it.
/// On shared hardware a neighbour can slow the machine for a moment; the median of the windows
/// is the figure such a moment does not move, the mean over the run is the one it does.
final class CPUSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [(at: UInt64, cpu: Double)] = []
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling at `start` (uptime nanoseconds), every second until `stopAt`; `read`
    /// returns CPU seconds so far. A failed read ends the sampling (the run's mean remains).
    init(start: UInt64, stopAt: UInt64, interval: UInt64 = 1_000_000_000, read: @escaping @Sendable () throws -> Double) {
        let thread = Thread { [self] in
            var next = start
            while next <= stopAt {
                let now = DispatchTime.now().uptimeNanoseconds
                if next > now, done.wait(timeout: .now() + .nanoseconds(Int(next - now))) == .success { break }
                guard let cpu = try? read() else { break }
                let at = DispatchTime.now().uptimeNanoseconds
                lock.lock()
                samples.append((at, cpu))
                lock.unlock()
                next += interval
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling; CPU microseconds per sign-in of each window in which sign-ins ended.
    func finish(completions: [UInt64]) -> [Double] {
        done.signal()
        finished.wait()
        lock.lock()
        defer { lock.unlock() }
        return Self.windows(samples, completions: completions.sorted())
    }

    static func windows(_ samples: [(at: UInt64, cpu: Double)], completions sorted: [UInt64]) -> [Double] {
        func ended(before time: UInt64) -> Int {
            var low = 0, high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid] < time { low = mid + 1 } else { high = mid }
            }
            return low
        }
        return zip(samples, samples.dropFirst()).compactMap { first, second in
            let count = ended(before: second.at) - ended(before: first.at)
            return count > 0 ? (second.cpu - first.cpu) / Double(count) * 1e6 : nil
        }
    }
}
