public import SignetHTTP

/// A test's own HTTP server on a free loopback port (a stub API, a client's logout endpoint),
/// started, its access log off; and its base URL, `http://127.0.0.1:PORT`.
public func startLoopbackServer(_ handler: any HTTPHandler, threads: Int = 2) throws -> (server: HTTPServer, base: String) {
    var configuration = HTTPServer.Configuration()
    // Port 0: the kernel picks one as it binds, so two tests starting at once never race for
    // a port found free a moment before.
    configuration.port = 0
    configuration.threads = threads
    let server = HTTPServer(configuration: configuration, handler: handler, log: AccessLog(enabled: false))
    try server.start()
    return (server, "http://127.0.0.1:\(server.port)")
}
