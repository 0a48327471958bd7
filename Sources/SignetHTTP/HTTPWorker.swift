import Glibc
internal import CSystem
import Foundation
import Synchronization

/// One worker thread: an epoll loop over its connections (level-triggered), which reads, parses
/// and answers requests one at a time per connection, in order. Other threads reach it through
/// its inbox and doorbell (an eventfd): the acceptor hands it connections, and a thread that wrote
/// a held answer hands back a connection that still has work (bytes the socket did not take, a
/// request that waited, a close).
final class HTTPWorker: @unchecked Sendable {
    enum Job {
        case adopt(HTTPConnection)
        case resume(HTTPConnection)
        /// Reads what its connections' sockets already hold, then signals: after it, every
        /// request whose first bytes had arrived is counted in flight (a shutdown waits for it).
        case catchUp(DispatchSemaphore)
        /// Signals at once: the loop has come round to its inbox (``HTTPServer/stalledWorkers(within:)``).
        case probe(DispatchSemaphore)
        case stop
    }

    unowned let server: HTTPServer
    private let poller: Int32
    private let doorbell: Int32
    private let inboxLock = NSLock()
    private var inbox: [Job] = []
    /// The worker thread's alone: its connections by descriptor.
    private var connections: [Int32: HTTPConnection] = [:]
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    private let finished = DispatchSemaphore(value: 0)
    private static let doorbellToken = UInt64.max

    init(server: HTTPServer) throws(HTTPServerError) {
        self.server = server
        poller = signet_epoll_create()
        doorbell = signet_eventfd()
        guard poller >= 0, doorbell >= 0,
              signet_epoll_watch(poller, 0, doorbell, 1, HTTPWorker.doorbellToken) == 0 else {
            throw HTTPServerError(message: "cannot start an HTTP worker (epoll: errno \(errno))")
        }
    }

    deinit {
        Glibc.close(poller)
        Glibc.close(doorbell)
    }

    /// Queues `job` for the worker; rings only when the inbox was empty (the worker takes it whole).
    func post(_ job: Job) {
        inboxLock.lock()
        inbox.append(job)
        let ring = inbox.count == 1
        inboxLock.unlock()
        if ring { signet_eventfd_signal(doorbell) }
    }

    func start(name: String) {
        let thread = Thread { [self] in
            _ = signet_name_thread(name)
            run()
            finished.signal()
        }
        thread.start()
    }

    /// Waits until the loop has ended (after a ``Job/stop``).
    func join() { finished.wait() }

    private func run() {
        var tokens = [UInt64](repeating: 0, count: 64)
        var flags = [UInt32](repeating: 0, count: 64)
        while true {
            let n = signet_epoll_wait(poller, &tokens, &flags, 64, -1)
            if n < 0 {
                if errno == EINTR { continue }
                return stopAll()
            }
            for i in 0..<Int(n) {
                if tokens[i] == HTTPWorker.doorbellToken {
                    signet_eventfd_drain(doorbell)
                    inboxLock.lock()
                    let jobs = inbox
                    inbox.removeAll(keepingCapacity: true)
                    inboxLock.unlock()
                    for job in jobs {
                        switch job {
                        case .adopt(let c): adopt(c)
                        case .resume(let c): if connections[c.fd] === c { resume(c) }
                        case .catchUp(let done): catchUp(); done.signal()
                        case .probe(let done): done.signal()
                        case .stop: return stopAll()
                        }
                    }
                    continue
                }
                handle(tokens[i], flags[i])
            }
        }
    }

    /// One event of a connection: room to write, bytes to read.
    private func handle(_ token: UInt64, _ flags: UInt32) {
        guard let c = connections[Int32(truncatingIfNeeded: token)] else { return }
        if flags & 2 != 0 { flush(c) }
        if flags & 1 != 0, connections[c.fd] === c { readable(c) }
    }

    /// One pass over the connections that are ready now, without waiting (the doorbell left for
    /// the loop), so that bytes already in their sockets are read.
    private func catchUp() {
        var tokens = [UInt64](repeating: 0, count: 64)
        var flags = [UInt32](repeating: 0, count: 64)
        let n = signet_epoll_wait(poller, &tokens, &flags, 64, 0)
        for i in 0..<max(0, Int(n)) where tokens[i] != HTTPWorker.doorbellToken { handle(tokens[i], flags[i]) }
    }

    private func adopt(_ c: HTTPConnection) {
        connections[c.fd] = c
        if signet_epoll_watch(poller, 0, c.fd, 1, UInt64(UInt32(bitPattern: c.fd))) != 0 { close(c) }
    }

    /// Closes every connection, except one whose held answer was never released: its descriptor
    /// stays open (the server is stopping), so that a late release cannot write to a number a
    /// newer descriptor took.
    private func stopAll() {
        for c in Array(connections.values) {
            c.lock.lock()
            let held = c.busy
            if held { c.gone = true }
            c.lock.unlock()
            if held {
                server.forget(c)
                _ = signet_epoll_watch(poller, 2, c.fd, 0, 0)
                connections[c.fd] = nil
            } else {
                close(c)
            }
        }
    }

    /// Closes `c` for good: out of the server's table first, then the descriptor.
    func close(_ c: HTTPConnection) {
        receiving(c, false)
        server.forget(c)
        _ = signet_epoll_watch(poller, 2, c.fd, 0, 0)
        connections[c.fd] = nil
        Glibc.close(c.fd)
    }

    /// Input while the client may still send, and room to write when `writable`.
    private func watch(_ c: HTTPConnection, writable: Bool) {
        c.lock.lock()
        let reading = !c.readDone
        c.lock.unlock()
        _ = signet_epoll_watch(poller, 1, c.fd, (reading ? 1 : 0) | (writable ? 2 : 0), UInt64(UInt32(bitPattern: c.fd)))
    }

    private func readable(_ c: HTTPConnection) {
        let got = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
        if got < 0, errno == EAGAIN || errno == EINTR { return }
        if got == 0 { return endOfInput(c) }
        if got < 0 { return hangUp(c) }
        c.lock.lock()
        c.lastActivity = DispatchTime.now().uptimeNanoseconds
        let lingering = c.lingeringSince != 0
        c.lock.unlock()
        if lingering { return }  // the last answer is out; what still comes is dropped
        // A client that sends on while its answer is held cannot make the buffer grow without
        // bound: past a whole request's limits it is cut off. A chunked body's framing does not
        // count against it: the chunks already read leave the buffer first.
        if c.input.count + got > server.maxBufferedBytes { RequestParser.compactChunks(&c.input, progress: &c.progress) }
        guard c.input.count + got <= server.maxBufferedBytes else { return hangUp(c) }
        c.input.append(contentsOf: buffer[0..<got])
        process(c)
    }

    /// The client has sent its last bytes. It may still read (a half-close): what it asked for
    /// before is answered, then the connection closes; a request left incomplete never will be.
    /// Input is no longer watched (it would report the end again and again).
    private func endOfInput(_ c: HTTPConnection) {
        c.lock.lock()
        let already = c.readDone
        c.readDone = true
        let writing = !c.output.isEmpty
        c.lock.unlock()
        // A second end without input watched is a full hang-up, reported as such.
        if already { return hangUp(c) }
        watch(c, writable: writing)
        finishIfDone(c)
    }

    /// After a half-close: closes once no answer is being prepared, held or still being written.
    private func finishIfDone(_ c: HTTPConnection) {
        c.lock.lock()
        let done = c.readDone && !c.busy && c.output.isEmpty
        c.lock.unlock()
        if done, connections[c.fd] === c { close(c) }
    }

    /// The connection failed: close now, or once a held answer is released.
    private func hangUp(_ c: HTTPConnection) {
        c.lock.lock()
        if c.busy {
            c.gone = true
            c.lock.unlock()
            _ = signet_epoll_watch(poller, 2, c.fd, 0, 0)
            return
        }
        c.lock.unlock()
        close(c)
    }

    /// Reads and answers the requests in `c.input`, in order, until one is incomplete or held.
    private func process(_ c: HTTPConnection) {
        while !c.input.isEmpty {
            c.lock.lock()
            if c.busy || c.gone || c.closeAfterWrite || c.lingeringSince != 0 || !c.output.isEmpty {
                c.waiting = true
                c.lock.unlock()
                return
            }
            c.lock.unlock()
            let parsed = c.input.withUnsafeBufferPointer {
                RequestParser.parse($0, maxHeadBytes: server.configuration.connectionMemoryBytes, maxBodyBytes: server.configuration.maxBodyBytes, progress: &c.progress)
            }
            var incomplete = false
            if case .incomplete = parsed { incomplete = true } else { c.progress = ParseProgress() }
            receiving(c, incomplete)
            switch parsed {
            case .incomplete(let expectsContinue):
                if expectsContinue, !c.continued {
                    c.continued = true
                    c.lock.lock()
                    c.output.append(contentsOf: HTTPWorker.continueLine)
                    let ok = c.writeOutput()
                    c.lock.unlock()
                    if !ok { return hangUp(c) }
                    _ = settle(c)
                }
                return
            case .failed(let failure, let head):
                c.input.removeAll()
                server.refuse(c, failure, head: head)
                _ = settle(c)
                return
            case .request(let head, let body, let consumed):
                c.input.removeFirst(consumed)
                c.continued = false
                server.dispatch(c, head, body)
                if !settle(c) { return }
            }
        }
    }

    /// Counts a request in flight from its first bytes (a shutdown lets it finish), until it is
    /// whole and the server counts it on.
    private func receiving(_ c: HTTPConnection, _ started: Bool) {
        guard c.receiving != started else { return }
        c.receiving = started
        server.inFlight.add(started ? 1 : -1, ordering: .relaxed)
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// After an answer (or a 100 Continue) went to the socket: whether the next request may be
    /// read now. Otherwise the connection waits for room to write, lingers before closing, is
    /// closed, or waits for its held answer.
    private func settle(_ c: HTTPConnection) -> Bool {
        c.lock.lock()
        let gone = c.gone && !c.busy
        let pending = !c.output.isEmpty
        let closing = c.closeAfterWrite
        let busy = c.busy
        // A request already read waits for the held answer: its writer hands the connection back.
        if busy, !c.input.isEmpty { c.waiting = true }
        c.lock.unlock()
        if gone {
            close(c)
            return false
        }
        if pending {
            watch(c, writable: true)
            return false
        }
        if closing {
            linger(c)
            return false
        }
        return !busy
    }

    /// A connection handed back by the thread that wrote its held answer.
    private func resume(_ c: HTTPConnection) {
        if settle(c) { process(c) }
        finishIfDone(c)
    }

    private func flush(_ c: HTTPConnection) {
        c.lock.lock()
        let ok = c.writeOutput()
        if ok { c.lastActivity = DispatchTime.now().uptimeNanoseconds }
        let done = c.output.isEmpty
        c.lock.unlock()
        if !ok { return hangUp(c) }
        guard done else { return }
        watch(c, writable: false)
        if settle(c) { process(c) }
        finishIfDone(c)
    }

    /// The last answer is written: stop sending, and drain what the client still sends for a
    /// moment (the sweeper ends it), so that closing with unread bytes does not reset the
    /// connection before the client has read that answer.
    private func linger(_ c: HTTPConnection) {
        c.lock.lock()
        let readDone = c.readDone
        let already = c.lingeringSince != 0
        if !already, !readDone { c.lingeringSince = DispatchTime.now().uptimeNanoseconds }
        c.lock.unlock()
        if readDone { return close(c) }  // nothing more will come to drain
        if !already { _ = Glibc.shutdown(c.fd, Int32(SHUT_WR)) }
        c.input.removeAll()
        c.progress = ParseProgress()
    }
}
