/// Chunked bodies (RFC 9112 §7.1), read as they arrive.
extension RequestParser {
    enum Dechunked { case incomplete, failed(RequestFailure), done(Int) }

    /// Reads chunks (then trailer lines) from `progress.chunkAt` on, keeping each whole one in
    /// `progress`, so that the next call starts where this one stopped.
    static func dechunk(_ p: UnsafeBufferPointer<UInt8>, progress: inout ParseProgress, maxBodyBytes: Int, maxTrailerBytes: Int) -> Dechunked {
        while !progress.inTrailers {
            let at = progress.chunkAt
            // chunk-size [ chunk-ext ] CRLF
            let eol: Int
            switch lineEnd(p, from: at, limit: 1024) {
            case .at(let end): eol = end
            case .bare: return .failed(.malformed("a chunk's size line ends with a bare CR or LF"))
            case .none: return p.count - at > 1024 ? .failed(.malformed("a chunk's size line is too long")) : .incomplete
            }
            var size = 0
            var i = at
            while i < eol, let digit = hex(p[i]) {
                guard i - at < 8 else { return .failed(.malformed("a chunk size over 8 hex digits")) }
                size = size << 4 | Int(digit)
                i += 1
            }
            guard i > at, i == eol || p[i] == UInt8(ascii: ";") || p[i] == 32 || p[i] == 9 else { return .failed(.malformed("a chunk size is not hexadecimal")) }
            // After the size only white space, then the end of the line or `;` and the extensions
            // (RFC 9112 §7.1.1): `1 x` is not a size a proxy and this server would both read as 1.
            var ext = i
            while ext < eol, p[ext] == 32 || p[ext] == 9 { ext += 1 }
            guard ext == eol || p[ext] == UInt8(ascii: ";") else { return .failed(.malformed("a chunk size is followed by more than an extension")) }
            for j in i..<eol where p[j] == 127 || (p[j] < 32 && p[j] != 9) { return .failed(.malformed("a chunk extension holds a control character")) }
            if size == 0 {
                progress.inTrailers = true
                progress.chunkAt = eol + 2
                break
            }
            guard progress.body.count + size <= maxBodyBytes else {
                return .failed(RequestFailure(status: 413, reason: "body_too_large", detail: "a chunked body over \(maxBodyBytes) bytes"))
            }
            let data = eol + 2
            guard p.count - data >= size + 2 else { return .incomplete }
            guard p[data + size] == 13, p[data + size + 1] == 10 else { return .failed(.malformed("a chunk does not end with CRLF")) }
            progress.body.append(contentsOf: UnsafeBufferPointer(rebasing: p[data..<(data + size)]))
            progress.chunkAt = data + size + 2
        }
        // Trailer fields, ignored, then the empty line.
        while true {
            let at = progress.chunkAt
            let room = maxTrailerBytes - progress.trailers
            let end: Int
            switch lineEnd(p, from: at, limit: room) {
            case .at(let found): end = found
            case .bare: return .failed(.malformed("a trailer line ends with a bare CR or LF"))
            case .none:
                return p.count - at > room ? .failed(RequestFailure(status: 431, reason: "headers_too_large", detail: "trailer fields over \(maxTrailerBytes) bytes")) : .incomplete
            }
            progress.trailers += end - at + 2
            progress.chunkAt = end + 2
            if end == at { return .done(end + 2) }
        }
    }

    /// Drops from `input` the chunks of a chunked body already read into `progress.body` (their
    /// data, sizes and extensions), keeping the head and what follows: the same request still
    /// parses from the shorter buffer, resumed with the updated `progress`. So a body sent in tiny
    /// chunks, whose framing can be several times its size, costs its connection no more buffer
    /// than the body itself and reaches the body cap's 413 instead of the buffer's limit. Returns
    /// how many bytes went.
    @discardableResult
    package static func compactChunks(_ input: inout [UInt8], progress: inout ParseProgress) -> Int {
        guard progress.head != nil, case .chunked = progress.framing.kind, !progress.inTrailers else { return 0 }
        let dropped = progress.chunkAt - progress.bodyStart
        guard dropped > 0 else { return 0 }
        input.removeSubrange(progress.bodyStart..<progress.chunkAt)
        progress.chunkAt = progress.bodyStart
        return dropped
    }

    /// Where a line of chunked framing ends: ``at(_:)`` the index of the CR of its CRLF; ``bare``
    /// when a CR or an LF stands alone before it (RFC 9112 §2.2: a bare CR is invalid, and this
    /// parser reads a bare LF in framing as no line end at all, as in a head); ``none`` while
    /// neither is there yet.
    enum LineEnd: Equatable { case at(Int), bare, none }

    /// The end of the line that starts at `from`, its CR in `from..<from + limit` (more than
    /// `limit` bytes without one can never become a line).
    static func lineEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> LineEnd {
        let last = min(p.count, from + max(0, limit))
        var i = from
        while i < last {
            if p[i] == 10 { return .bare }
            if p[i] == 13 {
                guard i + 1 < p.count else { return .none }
                return p[i + 1] == 10 ? .at(i) : .bare
            }
            i += 1
        }
        return .none
    }
}
