#if canImport(Glibc)
import Glibc
#endif

/// Durable SQLite writes whose wait for the disk moves from the thread that made them to the
/// answer that reports them. A server runs a request's handler inside ``run(_:)``; the store
/// then records each commit's number instead of waiting for its sync, and the server holds the
/// answer (not the thread) until ``SQLStore/whenDurable(_:_:)`` says the commits are on disk.
/// Outside ``run(_:)`` every write waits for its sync before the store call returns, as before.
package enum DeferredDurability {
    /// Per thread: nothing outside ``run(_:)``; inside it, 1 + the last commit number recorded.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Runs `body` with this thread's durability waits deferred. Returns its result and the
    /// number of the last commit it made that may not be on disk yet (0: none).
    package static func run<T>(_ body: () -> T) -> (T, Int) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        let result = body()
        let mark = Int(bitPattern: pthread_getspecific(key))
        pthread_setspecific(key, nil)
        return (result, max(0, mark - 1))
    }

    /// Whether this thread runs inside ``run(_:)``: its writes may wait in the open batch.
    static var active: Bool { pthread_getspecific(key) != nil }

    /// Inside ``run(_:)``: the number of the last commit this thread's request made (0: none yet).
    /// Outside it: 0.
    static var lastRecorded: Int { max(0, Int(bitPattern: pthread_getspecific(key)) - 1) }

    /// Inside ``run(_:)``: records commit `number` and returns true. Outside it: false, and the
    /// caller waits for the sync itself.
    static func record(_ number: Int) -> Bool {
        let mark = Int(bitPattern: pthread_getspecific(key))
        guard mark > 0 else { return false }
        if number + 1 > mark { pthread_setspecific(key, UnsafeRawPointer(bitPattern: number + 1)) }
        return true
    }
}
