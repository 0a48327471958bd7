import CCurl
import Foundation

/// Where and how mail is sent (DESIGN.md, "Email codes": `email.smtp_url` and its settings).
public struct SMTPSettings: Sendable, Equatable {
    /// `smtp://host:587` (STARTTLS, required unless the host is loopback) or `smtps://host:465`
    /// (TLS from the first byte).
    public var url: String
    public var username: String?
    public var password: String?
    /// A PEM file of the CAs to trust instead of the system's (a private relay, the tests).
    public var caFile: String?
    /// Seconds a whole delivery may take.
    public var timeout: Int

    public init(url: String, username: String? = nil, password: String? = nil, caFile: String? = nil, timeout: Int = 30) {
        self.url = url
        self.username = username
        self.password = password
        self.caFile = caFile
        self.timeout = timeout
    }

    /// Whether the URL's host is this machine, where STARTTLS may be skipped.
    public var isLoopback: Bool {
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]"
    }
}

/// Sends one message over SMTP with libcurl (RFC 5321; STARTTLS RFC 3207; AUTH RFC 4954).
public enum SMTP {
    /// Delivers `message` (RFC 5322 bytes, CRLF line ends) from `from` to `recipients`. Throws
    /// with the server's reply code; a 5xx is ``CurlError/permanent``.
    public static func send(_ message: [UInt8], from: String, to recipients: [String], settings: SMTPSettings) throws(CurlError) {
        let curl = try CurlHandle()
        curl.set(CURLOPT_URL, settings.url)
        curl.set(CURLOPT_MAIL_FROM, "<\(from)>")
        curl.set(CURLOPT_MAIL_RCPT, list: recipients.map { "<\($0)>" })
        if settings.url.lowercased().hasPrefix("smtp://") {
            // STARTTLS: required, except to a relay on this machine, where it is used if offered.
            curl.set(CURLOPT_USE_SSL, settings.isLoopback ? Int(CURLUSESSL_TRY.rawValue) : Int(CURLUSESSL_ALL.rawValue))
        }
        if let user = settings.username { curl.set(CURLOPT_USERNAME, user) }
        if let password = settings.password { curl.set(CURLOPT_PASSWORD, password) }
        if let ca = settings.caFile { curl.set(CURLOPT_CAINFO, ca) }
        curl.set(CURLOPT_TIMEOUT, settings.timeout)
        curl.set(CURLOPT_CONNECTTIMEOUT, min(10, settings.timeout))
        curl.set(CURLOPT_UPLOAD, 1)
        let source = UploadSource(message)
        let box = Unmanaged.passRetained(source)
        defer { box.release() }
        _ = signet_curl_set_pointer(curl.handle, CURLOPT_READDATA, box.toOpaque())
        _ = signet_curl_set_read(curl.handle) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let source = Unmanaged<UploadSource>.fromOpaque(userdata).takeUnretainedValue()
            let n = min(size * count, source.bytes.count - source.offset)
            source.bytes.withUnsafeBufferPointer { bytes in
                UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + source.offset, byteCount: n)
            }
            source.offset += n
            return n
        }
        try curl.perform()
    }
}
