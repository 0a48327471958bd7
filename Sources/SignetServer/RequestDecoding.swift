import Foundation
import SignetHTTP
import SignetWebAuthn

extension SignetService {
    /// Reads a JSON body (or, where `form` is allowed, `application/x-www-form-urlencoded`) with
    /// the strict parser: UTF-8, no duplicate keys, bounded depth, an object at the top.
    func body(_ request: HTTPRequest, form: Bool = false) throws -> JSONValue {
        let value: JSONValue
        switch request.mediaType {
        case "application/json":
            do {
                value = try StrictJSON(maxDepth: 16, maxLength: configuration.maxBodyBytes).parse(request.body)
            } catch {
                throw APIError.malformed("the body is not valid JSON: \(error.detail)")
            }
        case "application/x-www-form-urlencoded" where form:
            value = try Self.formToJSON(request.body)
        default:
            throw APIError(415, "invalid_request", "unsupported_media_type", form
                ? "send application/json or application/x-www-form-urlencoded" : "send application/json")
        }
        guard case .object = value else { throw APIError.malformed("the body must be a JSON object") }
        return value
    }

    /// `a=b&c=d` to a JSON object of strings; a value that is itself a JSON object or array
    /// (such as `authn_response`) is taken as JSON.
    static func formToJSON(_ body: [UInt8]) throws -> JSONValue {
        var object: [String: JSONValue] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) where !pair.isEmpty {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecode(parts[0]), let value = percentDecode(parts.count > 1 ? parts[1] : []) else {
                throw APIError.malformed("the form body is not valid percent-encoding")
            }
            guard object[key] == nil else { throw APIError.malformed("the form repeats \"\(key)\"") }
            if value.hasPrefix("{") || value.hasPrefix("["), let nested = try? StrictJSON().parse(Array(value.utf8)) {
                object[key] = nested
            } else {
                object[key] = .string(value)
            }
        }
        return .object(object)
    }

    static func percentDecode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(0x20)
            } else if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let v = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) else { return nil }
                out.append(v)
                i += 2
            } else {
                out.append(b)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    /// A base64url member of a WebAuthn response.
    static func bytes(_ text: String?, _ name: String) throws -> [UInt8] {
        guard let text, let bytes = Base64URL.decode(text) else { throw APIError.malformed("\(name) is missing or not base64url") }
        return bytes
    }

    /// A JSON answer.
    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse { .json(status, value.serializedBytes) }
}
