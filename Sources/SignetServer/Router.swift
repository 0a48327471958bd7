import SignetHTTP

/// Routes by method and path; `{name}` segments capture parameters.
struct Router<Context: Sendable>: Sendable {
    typealias Handler = @Sendable (Context, HTTPRequest, [String: String]) throws -> HTTPResponse

    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Substring]
        let handler: Handler
    }

    private(set) var routes: [Route] = []
    /// Routes without parameters by path, then method: one hash lookup for the common case.
    private var exact: [String: [String: Int]] = [:]

    mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        if !pattern.contains("{") { exact[pattern, default: [:]][method] = routes.count }
        routes.append(Route(method: method, pattern: pattern, segments: pattern.split(separator: "/"), handler: handler))
    }

    enum Match {
        case found(Route, [String: String])
        case methodNotAllowed(String)
        case notFound
    }

    func match(_ method: String, _ path: String) -> Match {
        if let index = exact[path]?[method] { return .found(routes[index], [:]) }
        let parts = path.split(separator: "/")
        var pathMatched: String?
        for route in routes where route.segments.count == parts.count {
            var parameters: [String: String] = [:]
            var matched = true
            for (segment, part) in zip(route.segments, parts) {
                if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    parameters[String(segment.dropFirst().dropLast())] = String(part)
                } else if segment != part {
                    matched = false
                    break
                }
            }
            guard matched else { continue }
            if route.method == method { return .found(route, parameters) }
            pathMatched = route.pattern
        }
        return pathMatched.map(Match.methodNotAllowed) ?? .notFound
    }
}
