/// A failure inside SignetCrypto. Equal by ``code``; ``detail`` is for logs only.
public struct CryptoError: Error, Hashable, CustomStringConvertible, Sendable {
    /// Stable, machine-readable code.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Bytes that do not form a valid key, certificate or signature.
        public static let invalidEncoding = Code(rawValue: "invalid_encoding")
        /// A key of a type or curve that the operation does not support.
        public static let unsupportedKey = Code(rawValue: "unsupported_key")
        /// OpenSSL reported an internal failure (allocation, provider).
        public static let library = Code(rawValue: "library")
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
