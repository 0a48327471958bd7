import SignetAuth
import Foundation
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// `listen` and `metrics.listen` on IPv6: `[::]` takes both families, `[::1]` only IPv6, and an
/// IPv4 client of a dual-stack socket is named by its IPv4 address everywhere.
@Suite struct IPv6ListenTests {
    @Test("listen takes HOST:PORT with a numeric IPv4 address or [IPv6]:PORT; anything else is refused at load, saying what it must be", arguments: [
        ("[::]:8080", "::", 8080), ("[::1]:0", "::1", 0), ("[2001:db8::5]:443", "2001:db8::5", 443), ("0.0.0.0:80", "0.0.0.0", 80),
        // The loopback name RFC 6761 fixes, as a newcomer types it.
        ("localhost:8080", "127.0.0.1", 8080), ("LocalHost:0", "127.0.0.1", 0),
    ] as [(String, String, UInt16)])
    func accepted(_ listen: String, _ host: String, _ port: UInt16) throws {
        let c = try ConfigurationLoader.load(file: nil, environment: ["SIGNET_LISTEN": listen, "SIGNET_METRICS_LISTEN": listen])
        #expect(c.listenHost == host && c.listenPort == port)
        #expect(c.metricsListen?.host == host && c.metricsListen?.port == port)
    }

    @Test("a listen that is not HOST:PORT, a host name, an unbracketed IPv6 or a bracketed IPv4 address is refused, saying what to write instead", arguments: [
        ("::1:8080", "an IPv6 address goes in brackets, [::1]:8080"), ("[::1]8080", "must be HOST:PORT"), ("[::1]:x", "must be HOST:PORT"),
        ("[::1]:", "must be HOST:PORT"), ("127.0.0.1:+80", "must be HOST:PORT"), ("127.0.0.1:65536", "port 65536 is above 65535"),
        ("8080", "must be HOST:PORT, such as 0.0.0.0:8080 (or [::]:8080) for every interface, 127.0.0.1:8080 for this machine only"),
        (":8443", "must name the address: 0.0.0.0:8443 (or [::]:8443) for every interface, 127.0.0.1:8443"), ("*:80", "must name the address: 0.0.0.0:80"),
        ("[]:80", "must name the address"), ("auth.example.com:443", "not a name like auth.example.com: give the address it resolves to"),
        ("[1.2.3.4]:80", "numeric IPv4 address"), ("[::g]:80", "numeric IPv4 address"), ("1.2.3.4.5:80", "numeric IPv4 address"),
        ("[fe80::1%eth0]:80", "numeric IPv4 address"),
    ])
    func refused(_ listen: String, _ message: String) {
        for name in ["SIGNET_LISTEN", "SIGNET_METRICS_LISTEN"] {
            do {
                _ = try ConfigurationLoader.load(file: nil, environment: [name: listen])
                Issue.record("\(name)=\(listen) accepted")
            } catch let error as ConfigurationError {
                #expect(error.message.contains(message), "\(name)=\(listen): \(error.message)")
                #expect(error.message.hasPrefix(name == "SIGNET_LISTEN" ? "listen" : "metrics.listen"), "\(error.message)")
                #expect(error.message.hasSuffix("(got \"\(listen)\")"), "\(error.message)")
            } catch {
                Issue.record("\(name)=\(listen): \(error)")
            }
        }
    }

    @Test("on [::] a server answers IPv6 and IPv4 clients, and names the IPv4 one by its IPv4 address, not ::ffff:127.0.0.1")
    func dualStack() throws {
        let server = try TestServer(.socket) { $0.listenHost = "::" }
        #expect(server.app.baseURL == "http://[::]:\(server.port)")
        #expect(try HTTPClient(host: "::1", port: server.port).send("GET", "/healthz").status == 200)
        #expect(try HTTPClient(host: "127.0.0.1", port: server.port).send("GET", "/healthz").status == 200)
        var remotes: [String] = []
        #expect(eventually {
            let log = try String(contentsOf: server.logFile, encoding: .utf8)
            remotes = log.split(separator: "\n").compactMap { line in
                line.contains(#""path":"/healthz""#) ? line.firstMatch(of: #/"remote":"([^"]*)"/#).map { String($0.1) } : nil
            }
            return remotes.count == 2
        })
        #expect(remotes == ["::1", "127.0.0.1"], "\(remotes)")
    }

    @Test("on [::1] only IPv6 clients reach the server; metrics.listen on [::1] answers /metrics there")
    func loopbackOnly() throws {
        let server = try TestServer(.socket) {
            $0.listenHost = "::1"
            $0.metricsListen = ("::1", 0)
        }
        let metricsPort = try #require(server.app.metricsServer?.port)
        #expect(try HTTPClient(host: "::1", port: server.port).send("GET", "/healthz").status == 200)
        #expect(throws: HTTPClient.Failure.self) { try HTTPClient(host: "127.0.0.1", port: server.port, timeout: 1).send("GET", "/healthz") }
        let metrics = try HTTPClient(host: "::1", port: metricsPort).send("GET", "/metrics")
        #expect(metrics.status == 200 && metrics.text.contains("signet_"))
    }

    @Test("a client given a host name, not an address, says so instead of connecting anywhere")
    func clientHostName() {
        #expect(throws: HTTPClient.Failure.self) { try HTTPClient(host: "localhost", port: 1).send("GET", "/healthz") }
    }

    @Test("a bind that fails says why in words: a port another process holds, an address of no interface here")
    func bindFailures() throws {
        let held = try HTTPServer.listen(host: "127.0.0.1", port: 0)
        defer { close(held) }
        let port = try #require(HTTPServer.boundPort(held))
        #expect { _ = try HTTPServer.listen(host: "127.0.0.1", port: port) } throws: {
            "\($0)".contains("cannot listen on 127.0.0.1:\(port): another process listens on it (errno \(EADDRINUSE))")
        }
        // TEST-NET-1 (RFC 5737): documentation's, on no machine's interface.
        #expect { _ = try HTTPServer.listen(host: "192.0.2.1", port: 8080) } throws: {
            "\($0)".contains("cannot listen on 192.0.2.1:8080: no interface of this machine has that address")
        }
    }
}
