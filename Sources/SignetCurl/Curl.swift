import CCurl
import Foundation

/// A failure of a libcurl transfer, with libcurl's code and, for SMTP, the server's last reply
/// code. `permanent` is true for a 5xx reply (RFC 5321 §4.2.1): sending again will not help.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let code: Int
    public let message: String
    /// The server's reply code (SMTP, HTTP), 0 when there was none.
    public let replyCode: Int
    public var permanent: Bool { (500...599).contains(replyCode) }
    public var description: String { "curl \(code): \(message)\(replyCode > 0 ? " (reply \(replyCode))" : "")" }
}

/// One libcurl easy handle, the only place Signet touches libcurl: options are set through the
/// typed wrappers of CCurl's shim, a transfer runs with ``perform()``.
final class CurlHandle {
    private static let initialized: Bool = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()
    let handle: UnsafeMutableRawPointer
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    private var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    init() throws(CurlError) {
        guard Self.initialized, let h = curl_easy_init() else { throw CurlError(code: -1, message: "libcurl could not start", replyCode: 0) }
        handle = h
        // No signals from libcurl's resolver timeouts in a multi-threaded server.
        set(CURLOPT_NOSIGNAL, 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in lists { curl_slist_free_all(list) }
    }

    func set(_ option: CURLoption, _ value: Int) { _ = signet_curl_set_long(handle, option, value) }
    func set(_ option: CURLoption, _ value: String) { _ = value.withCString { signet_curl_set_string(handle, option, $0) } }
    func set(_ option: CURLoption, list values: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for value in values { list = curl_slist_append(list, value) }
        guard let list else { return }
        lists.append(list)
        _ = signet_curl_set_list(handle, option, list)
    }

    /// Runs the transfer; the error names libcurl's code, its message and the reply code.
    func perform() throws(CurlError) {
        let code = error.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            _ = signet_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            return curl_easy_perform(handle)
        }
        guard code != CURLE_OK else { return }
        var reply = 0
        _ = signet_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &reply)
        let detail = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw CurlError(code: Int(code.rawValue), message: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail, replyCode: reply)
    }

    /// The server's last reply code.
    var replyCode: Int {
        var reply = 0
        _ = signet_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &reply)
        return reply
    }
}

/// The bytes an upload reads from, for libcurl's read callback.
final class UploadSource {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}
