/// A value a template is rendered with.
public enum TemplateValue: Sendable {
    /// Text: always HTML-escaped where it is put.
    case text(String)
    /// A section's condition.
    case bool(Bool)
    /// A section repeated once per item, each with its own values (and the outer ones).
    case list([[String: TemplateValue]])
    /// Markup that a template rendered (and so escaped) already: put as it is.
    case html(Rendered)
}

/// The output of a template: HTML in which every value was escaped. Only ``Template`` makes one,
/// so markup cannot be built from unescaped text by accident.
public struct Rendered: Sendable, Equatable {
    public let html: String
    fileprivate init(_ html: String) { self.html = html }
}

/// Logic-less templates (a subset of Mustache): `{{name}}` puts a value, escaped;
/// `{{#name}}…{{/name}}` renders its inside when the value is true, non-empty text, or once per
/// item of a list; `{{^name}}…{{/name}}` when it is false, empty or missing; `{{t.key}}` puts
/// the page language's text for `key`. There is no way to put unescaped text: the only raw
/// values are other templates' output (``TemplateValue/html(_:)``).
public struct Template: Sendable {
    indirect enum Node: Sendable {
        case literal(String)
        case value(String)
        case section(String, inverted: Bool, [Node])
    }

    let nodes: [Node]

    /// Parses `source`; a template that does not parse is a programming error, found by the
    /// tests that render every page.
    public init(_ source: String) {
        var parser = Parser(source: Array(source.unicodeScalars))
        nodes = parser.parse(closing: nil)
        precondition(parser.error == nil, "template: \(parser.error ?? "")")
    }

    public func render(_ values: [String: TemplateValue], strings: [String: String] = [:]) -> Rendered {
        var out = ""
        out.reserveCapacity(4096)
        Self.render(nodes, scopes: [values], strings: strings, into: &out)
        return Rendered(out)
    }

    static func lookup(_ name: String, _ scopes: [[String: TemplateValue]]) -> TemplateValue? {
        for scope in scopes.reversed() { if let value = scope[name] { return value } }
        return nil
    }

    static func render(_ nodes: [Node], scopes: [[String: TemplateValue]], strings: [String: String], into out: inout String) {
        for node in nodes {
            switch node {
            case .literal(let text):
                out += text
            case .value(let name):
                if name.hasPrefix("t.") {
                    out += escape(strings[String(name.dropFirst(2))] ?? name)
                    continue
                }
                switch lookup(name, scopes) {
                case .text(let text)?: out += escape(text)
                case .html(let rendered)?: out += rendered.html
                case .bool(let flag)?: out += flag ? "true" : "false"
                case .list, nil: break
                }
            case .section(let name, let inverted, let inner):
                let value = lookup(name, scopes)
                let truthy: Bool
                switch value {
                case .bool(let flag)?: truthy = flag
                case .text(let text)?: truthy = !text.isEmpty
                case .list(let items)?: truthy = !items.isEmpty
                case .html(let rendered)?: truthy = !rendered.html.isEmpty
                case nil: truthy = false
                }
                if inverted {
                    if !truthy { render(inner, scopes: scopes, strings: strings, into: &out) }
                } else if case .list(let items)? = value {
                    for item in items { render(inner, scopes: scopes + [item], strings: strings, into: &out) }
                } else if truthy {
                    render(inner, scopes: scopes, strings: strings, into: &out)
                }
            }
        }
    }

    /// HTML escaping for text and for quoted attribute values (HTML Living Standard §13.1.2.3):
    /// `&`, `<`, `>`, `"` and `'`.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    struct Parser {
        let source: [Unicode.Scalar]
        var index = 0
        var error: String?

        init(source: [Unicode.Scalar]) { self.source = source }

        func starts(_ text: String, at i: Int) -> Bool {
            let scalars = Array(text.unicodeScalars)
            guard i + scalars.count <= source.count else { return false }
            return Array(source[i..<(i + scalars.count)]) == scalars
        }

        mutating func parse(closing: String?) -> [Node] {
            var nodes: [Node] = []
            var literal = String.UnicodeScalarView()
            func flush() {
                if !literal.isEmpty { nodes.append(.literal(String(literal))) }
                literal = String.UnicodeScalarView()
            }
            while index < source.count {
                guard starts("{{", at: index) else {
                    literal.append(source[index])
                    index += 1
                    continue
                }
                var end = index + 2
                while end < source.count, !starts("}}", at: end) { end += 1 }
                guard end < source.count else {
                    error = "an unclosed {{"
                    return nodes
                }
                let tag = String(String.UnicodeScalarView(source[(index + 2)..<end])).trimmingSpaces
                index = end + 2
                flush()
                if let first = tag.unicodeScalars.first, first == "#" || first == "^" {
                    let name = String(tag.dropFirst()).trimmingSpaces
                    let inner = parse(closing: name)
                    nodes.append(.section(name, inverted: first == "^", inner))
                } else if tag.hasPrefix("/") {
                    guard String(tag.dropFirst()).trimmingSpaces == closing else {
                        error = "{{\(tag)}} closes nothing open"
                        return nodes
                    }
                    return nodes
                } else {
                    nodes.append(.value(tag))
                }
            }
            flush()
            if let closing { error = "{{#\(closing)}} is never closed" }
            return nodes
        }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
