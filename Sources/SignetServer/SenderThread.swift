import Foundation
import Synchronization
internal import CSystem

/// The thread an outbox sender runs on (``MailSender``, ``LogoutSender``): named for `top` and
/// `perf`, and told to stop between two passes.
final class SenderThread: Sendable {
    private let stopped = Mutex(false)

    var isStopped: Bool { stopped.withLock { $0 } }

    /// Runs `body` on a new thread named `name` (`Thread.name` does not reach Linux).
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            _ = signet_name_thread(name)
            body()
        }.start()
    }

    func stop() { stopped.withLock { $0 = true } }
}
