/// Collected client data (WebAuthn L3 §5.8.1), parsed from the bytes of `clientDataJSON`.
public struct CollectedClientData: Sendable {
    /// The bytes exactly as received; their SHA-256 is what the authenticator signed.
    public let raw: [UInt8]
    public let type: String
    /// The challenge, base64url-decoded; `nil` when it was not canonical base64url.
    public let challenge: [UInt8]?
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?
    /// `tokenBinding.status` when the member is an object (Level 2; Level 3 drops it).
    public let tokenBindingStatus: String?
    let tokenBindingInvalid: Bool

    /// Parses `clientDataJSON`: UTF-8 (a leading BOM is dropped, §5.8.1.2 "UTF-8 decode"),
    /// unknown members ignored.
    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        raw = bytes
        var text = bytes[...]
        if text.starts(with: [0xef, 0xbb, 0xbf]) { text = text.dropFirst(3) }
        guard let object = try StrictJSON(maxDepth: 8, maxLength: 16 * 1024).parse(text).object else {
            throw .malformed("clientDataJSON is not a JSON object", step: "5.8.1")
        }
        guard let type = object["type"]?.string, let challenge = object["challenge"]?.string,
              let origin = object["origin"]?.string
        else { throw .malformed("clientDataJSON lacks type, challenge or origin", step: "5.8.1") }
        self.type = type
        self.challenge = Base64URL.decode(challenge, canonical: true)
        self.origin = origin
        switch object["crossOrigin"] {
        case nil, .null?: crossOrigin = false
        case .bool(let b)?: crossOrigin = b
        default: throw .malformed("clientDataJSON crossOrigin is not a boolean", step: "5.8.1")
        }
        switch object["topOrigin"] {
        case nil: topOrigin = nil
        case .string(let s)?: topOrigin = s
        default: throw .malformed("clientDataJSON topOrigin is not a string", step: "5.8.1")
        }
        if let binding = object["tokenBinding"]?.object {
            let status = binding["status"]?.string
            tokenBindingStatus = status
            tokenBindingInvalid = !(status == "supported" || (status == "present" && binding["id"]?.string != nil))
        } else {
            tokenBindingStatus = nil
            tokenBindingInvalid = false
        }
    }
}
