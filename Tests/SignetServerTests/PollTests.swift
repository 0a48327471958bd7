import CSystem
import Foundation
import Glibc
import Testing

/// `signet_poll_ns`, the wait of `bench login`'s load generator: ppoll(2) with a limit in
/// nanoseconds. poll(2) counts whole milliseconds, so a generator due again in less than one
/// either spins (a wait of 0) or starts late (a wait rounded up).
@Suite("ppoll with a nanosecond limit")
struct PollTests {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    @Test("with nothing ready it waits at least the sub-millisecond limit, where poll(2) would return at once")
    func waitsBelowAMillisecond() {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var polled = [pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)]
        for limit in [Int64(300_000), 1_500_000] {
            let started = Self.now()
            #expect(signet_poll_ns(&polled, 1, limit) == 0)
            // The kernel never ends a wait before its limit; after it is scheduling, not a bound.
            #expect(Self.now() - started >= UInt64(limit))
            #expect(polled[0].revents == 0)
        }
    }

    @Test("a descriptor that is ready ends the wait at once and is reported")
    func readyDescriptor() {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        var polled = [pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0), pollfd(fd: fds[1], events: 0, revents: 0)]
        // A limit of 10 s: a call that waited it out would fail the test's time budget, not pass.
        #expect(signet_poll_ns(&polled, 2, 10_000_000_000) == 1)
        #expect(polled[0].revents & Int16(POLLIN) != 0 && polled[1].revents == 0)
        // A negative limit is no limit; with data waiting it still returns at once.
        #expect(signet_poll_ns(&polled, 1, -1) == 1)
    }

    @Test("a bad descriptor is reported per entry, not as a failed call")
    func badDescriptor() {
        var polled = [pollfd(fd: 1_000_000, events: Int16(POLLIN), revents: 0)]
        #expect(signet_poll_ns(&polled, 1, 0) == 1)
        #expect(polled[0].revents & Int16(POLLNVAL) != 0)
    }
}
