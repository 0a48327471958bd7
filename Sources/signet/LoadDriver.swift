import CSystem
import Foundation
import Glibc
import SignetAPI
import SignetHTTP
import SignetSoftware
import SignetWebAuthn

/// The load of `signet bench login`, driven the way wrk drives HTTP load: a few threads, each
/// running an event loop (`poll`) over its share of the clients' keep-alive connections. Every client
/// runs complete sign-ins (challenge, sign, token) back to back, or on a fixed schedule in open
/// loop. With 64 clients on two shared cores, 64 blocking threads would add their own context
/// switches, wake-ups and cache footprint to the server's figures; a loop per core does not.
final class LoadDriver: @unchecked Sendable {
    /// One client: its authenticator (with a registered passkey), server and connection state.
    final class Client {
        let authenticator: SoftwareAuthenticator
        let target: LoginBenchmark.Target
        var fd: Int32 = -1
        var output: [UInt8] = []
        var sent = 0
        /// Whether to wait for writability too (while a request could not be sent whole).
        var watchingOutput = false
        var input: [UInt8] = []
        var stage = Stage.idle
        /// When the sign-in in flight started (its scheduled time in open loop), in nanoseconds.
        var started: UInt64 = 0
        /// Open loop: when the next sign-in is due.
        var due: UInt64 = 0
        /// When the connection last finished a sign-in (nanoseconds).
        var idleSince: UInt64 = 0

        enum Stage { case idle, challenge, token }
        /// With `bench login --dpop`: the key whose proof each token request carries.
        let dpop: SoftwareDPoPKey?

        init(authenticator: SoftwareAuthenticator, target: LoginBenchmark.Target, dpop: SoftwareDPoPKey? = nil) {
            self.authenticator = authenticator
            self.target = target
            self.dpop = dpop
        }
    }

    struct Outcome {
        var latencies: [Double] = []
        /// When each sign-in ended (``now()``), in the order of `latencies`.
        var completions: [UInt64] = []
        var failures = 0
        var firstFailure: String?
    }

    let clients: [Client]
    let clientID: String
    let threads: Int

    init(clients: [Client], clientID: String, threads: Int) {
        self.clients = clients
        self.clientID = clientID
        self.threads = max(1, min(threads, clients.count))
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs sign-ins from `start` until `stopAt` (sign-ins in flight then finish), closed loop or
    /// with one sign-in every `interval` nanoseconds per client.
    func run(start: UInt64, stopAt: UInt64, interval: UInt64?) -> Outcome {
        final class Total: @unchecked Sendable {
            let lock = NSLock()
            var outcome = Outcome()
        }
        let total = Total()
        let group = DispatchGroup()
        for t in 0..<threads {
            let mine = stride(from: t, to: clients.count, by: threads).map { $0 }
            let thread = Thread { [self] in
                let outcome = loop(mine, start: start, stopAt: stopAt, interval: interval)
                total.lock.lock()
                total.outcome.latencies += outcome.latencies
                total.outcome.completions += outcome.completions
                total.outcome.failures += outcome.failures
                total.outcome.firstFailure = total.outcome.firstFailure ?? outcome.firstFailure
                total.lock.unlock()
                group.leave()
            }
            thread.stackSize = 1 << 20
            group.enter()
            thread.start()
        }
        group.wait()
        for client in clients where client.fd >= 0 {
            close(client.fd)
            client.fd = -1
        }
        return total.outcome
    }

    private func loop(_ indices: [Int], start: UInt64, stopAt: UInt64, interval: UInt64?) -> Outcome {
        var outcome = Outcome()
        let mine = indices.map { clients[$0] }
        for (slot, client) in mine.enumerated() {
            // Open loop: each client keeps its own phase, so sign-ins arrive evenly spread.
            client.due = start + (interval.map { $0 * UInt64(indices[slot]) / UInt64(clients.count) } ?? 0)
        }
        func fail(_ client: Client, _ why: String) {
            outcome.failures += 1
            if outcome.firstFailure == nil { outcome.firstFailure = why }
            if client.fd >= 0 { close(client.fd) }
            client.fd = -1
            client.stage = .idle
            client.input = []
        }
        var polled: [pollfd] = []
        var slots: [Int] = []
        let grace = stopAt + 10_000_000_000
        while true {
            let now = Self.now()
            // Start what is due.
            var busy = false
            var nextDue = UInt64.max
            for client in mine {
                if client.stage == .idle && now < stopAt {
                    if interval == nil || client.due <= now {
                        let origin = interval == nil ? now : client.due
                        if let interval { client.due += interval }
                        if let why = begin(client) { fail(client, why) } else { client.started = origin }
                    } else {
                        nextDue = min(nextDue, client.due)
                    }
                }
                if client.stage != .idle { busy = true }
            }
            if (!busy && now >= stopAt) || now >= grace { break }
            // Until the next sign-in is due, to the nanosecond (at most 0.1 s): poll(2) counts whole
            // milliseconds, so a wait of less than one would spin, and a wait rounded up would
            // start sign-ins late. At 1,000 sign-ins/s a spinning loop took both cores.
            let wait = Int64(min(100_000_000, nextDue > now ? nextDue - now : 0))
            polled.removeAll(keepingCapacity: true)
            slots.removeAll(keepingCapacity: true)
            for (slot, client) in mine.enumerated() where client.fd >= 0 && client.stage != .idle {
                polled.append(pollfd(fd: client.fd, events: Int16(POLLIN) | (client.watchingOutput ? Int16(POLLOUT) : 0), revents: 0))
                slots.append(slot)
            }
            let n = signet_poll_ns(&polled, nfds_t(polled.count), wait)
            guard n > 0 else { continue }
            for (i, entry) in polled.enumerated() where entry.revents != 0 {
                let client = mine[slots[i]]
                guard client.fd == entry.fd else { continue }
                if entry.revents & Int16(POLLOUT) != 0, let why = flush(client) {
                    fail(client, why)
                    continue
                }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, let why = readable(client, &outcome) { fail(client, why) }
            }
        }
        return outcome
    }

    /// Opens the connection if needed and sends the challenge request.
    private func begin(_ client: Client) -> String? {
        // A connection left idle for a while (open loop at a low rate) may have been closed by
        // the server's idle timeout: look before sending on it, and reconnect if so.
        if client.fd >= 0 && Self.now() - client.idleSince > 1_000_000_000 {
            var byte: UInt8 = 0
            if recv(client.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0 {
                close(client.fd)
                client.fd = -1
            }
        }
        if client.fd < 0 {
            guard let fd = Self.connect(client.target) else { return "connect to \(SocketAddress.authority(client.target.host, client.target.port)) failed" }
            client.fd = fd
        }
        client.stage = .challenge
        return send(client, "/passkey/challenge", .object(["client_id": .string(clientID)]))
    }

    private func send(_ client: Client, _ path: String, _ body: JSONValue) -> String? {
        let bytes = body.serializedBytes
        // A DPoP proof for the token request, made here, on the load generator's side.
        var proof = ""
        if path == "/oauth/token", let key = client.dpop {
            guard let made = try? key.proof(method: "POST", url: client.target.origin + path) else { return "cannot make a DPoP proof" }
            proof = "DPoP: \(made)\r\n"
        }
        client.output = Array("POST \(path) HTTP/1.1\r\nHost: \(SocketAddress.authority(client.target.host, client.target.port))\r\nContent-Type: application/json\r\n\(proof)Content-Length: \(bytes.count)\r\n\r\n".utf8) + bytes
        client.sent = 0
        return flush(client)
    }

    /// Sends what is pending; waits for writability while some is left.
    private func flush(_ client: Client) -> String? {
        while client.sent < client.output.count {
            let n = client.output.withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress! + client.sent, $0.count - client.sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                client.sent += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                return "send failed (errno \(errno))"
            }
        }
        client.watchingOutput = client.sent < client.output.count
        return nil
    }

    /// Reads what arrived; handles each complete response.
    private func readable(_ client: Client, _ outcome: inout Outcome) -> String? {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                client.input += chunk[..<n]
                if n < chunk.count { break }
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                return n == 0 ? "connection closed by the server" : "receive failed (errno \(errno))"
            }
        }
        while true {
            let taken: HTTPClient.Response?
            do {
                taken = try HTTPClient.takeResponse(from: &client.input)
            } catch {
                return "\(error)"
            }
            guard let response = taken else { break }
            guard response.status == 200 else {
                return "\(client.stage == .challenge ? "/passkey/challenge" : "/oauth/token") answered \(response.status): \(response.text)"
            }
            guard let json = try? StrictJSON().parse(response.body) else { return "an answer is not JSON" }
            switch client.stage {
            case .challenge:
                guard let session = json["auth_session"]?.string,
                      let challenge = json["authn_params_public_key"]?["challenge"]?.string.flatMap({ Base64URL.decode($0) }),
                      let assertion = try? client.authenticator.authenticate(rpID: client.target.rpID, origin: client.target.origin, challenge: challenge)
                else { return "unexpected /passkey/challenge answer" }
                client.stage = .token
                if let why = send(client, "/oauth/token", .object([
                    "grant_type": .string(GrantType.webauthn), "client_id": .string(clientID), "auth_session": .string(session), "authn_response": assertion.json,
                ])) { return why }
            case .token:
                guard json["access_token"]?.string != nil else { return "no access token" }
                if client.dpop != nil, json["token_type"]?.string != "DPoP" { return "a bearer token where a DPoP token was due" }
                client.idleSince = Self.now()
                outcome.latencies.append(Double(client.idleSince - client.started) / 1e9)
                outcome.completions.append(client.idleSince)
                client.stage = .idle
            case .idle:
                return "an answer nobody asked for"
            }
        }
        return nil
    }

    /// A non-blocking TCP connection with Nagle off, or `nil`.
    static func connect(_ target: LoginBenchmark.Target) -> Int32? {
        guard let address = SocketAddress(host: target.host, port: target.port) else { return nil }
        let s = address.connect()
        guard s >= 0 else { return nil }
        guard fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK) == 0 else {
            close(s)
            return nil
        }
        return s
    }
}
