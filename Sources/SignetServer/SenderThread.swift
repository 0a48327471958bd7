import Foundation
import Synchronization
internal import CSystem

/// The thread an outbox sender runs on (``MailSender``, ``LogoutSender``, ``LogStreamSender``):
/// named for `top` and `perf`, told to stop between two passes, and running one pass at a time,
/// its own beat's or a caller's (tests).
final class SenderThread: Sendable {
    private let stopped = Mutex(false)
    /// Held for the length of a pass.
    private let passing = Mutex(())

    var isStopped: Bool { stopped.withLock { $0 } }

    /// Runs `body` on a new thread named `name` (`Thread.name` does not reach Linux).
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            _ = signet_name_thread(name)
            body()
        }.start()
    }

    func stop() { stopped.withLock { $0 = true } }

    /// Stops the beat, and returns once no pass of its is under way: after it, only
    /// ``pass(_:)`` runs one. A pass the beat began just before would otherwise read the
    /// outbox after the caller's changes and send on its own.
    func pause() {
        stop()
        passing.withLock { _ in }
    }

    /// The beat's pass: `body`, unless stopped, which is checked under the pass lock, so that a
    /// ``pause()`` that returned is never followed by one.
    func beat<T: Sendable>(otherwise idle: T, _ body: () -> T) -> T {
        passing.withLock { _ in isStopped ? idle : body() }
    }

    /// A pass on the calling thread, whether the beat runs or not; one at a time with the beat's.
    func pass<T: Sendable>(_ body: () -> T) -> T { passing.withLock { _ in body() } }
}
