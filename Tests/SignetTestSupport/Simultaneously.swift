import Foundation

/// Runs `body(0)` … `body(n - 1)` each on a thread of its own, all released together, and
/// returns their results in index order once every one has finished.
///
/// For the tests that claim "of N at once, exactly one wins". Work handed to
/// `DispatchQueue.global()` or `concurrentPerform` is not at once: on Linux the global pool
/// starts about one thread per core and adds more only slowly while its threads block, so in a
/// busy test process 32 blocking requests ran one after another, long enough for the server to
/// close the idle connections the test had opened for them.
public func simultaneously<T: Sendable>(_ n: Int, _ body: @escaping @Sendable (Int) throws -> T) -> [Result<T, any Error>] {
    let gate = Gate<T>(count: n)
    var threads: [Thread] = []
    for index in 0..<n {
        let thread = Thread {
            gate.arriveAndWait()
            let result = Result { try body(index) }
            gate.finish(index, result)
        }
        thread.stackSize = 1 << 20
        threads.append(thread)
    }
    for thread in threads { thread.start() }
    return gate.results()
}

/// The barrier and the results of ``simultaneously(_:_:)``.
private final class Gate<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var arrived = 0
    private var finished: [Int: Result<T, any Error>] = [:]

    init(count: Int) { self.count = count }

    func arriveAndWait() {
        condition.lock()
        arrived += 1
        if arrived == count { condition.broadcast() }
        while arrived < count { condition.wait() }
        condition.unlock()
    }

    func finish(_ index: Int, _ result: Result<T, any Error>) {
        condition.lock()
        finished[index] = result
        condition.broadcast()
        condition.unlock()
    }

    func results() -> [Result<T, any Error>] {
        condition.lock()
        while finished.count < count { condition.wait() }
        let all = (0..<count).map { finished[$0]! }
        condition.unlock()
        return all
    }
}

/// `n` threads of their own running `body(0)` … `body(n - 1)` in the background from now on,
/// for load that runs while the test does something else; ``join()`` waits for them all.
public final class Workers: Sendable {
    private let group = DispatchGroup()

    public init(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        for index in 0..<n {
            group.enter()
            let thread = Thread { [group] in
                body(index)
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    public func join() { group.wait() }
}
