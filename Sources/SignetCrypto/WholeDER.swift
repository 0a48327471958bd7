internal import COpenSSL

/// Parses `der` with one of OpenSSL's `d2i_` functions (`parse` gets the read pointer and the
/// length) and keeps the object only when every byte was consumed: a value with bytes after it
/// is refused, and the object freed with `free`.
func parseWholeDER(_ der: [UInt8], _ parse: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
                   free: (OpaquePointer) -> Void) -> OpaquePointer? {
    der.withUnsafeBufferPointer { buffer in
        var p: UnsafePointer<UInt8>? = buffer.baseAddress
        guard let object = parse(&p, buffer.count) else { return nil }
        guard p == buffer.baseAddress.map({ $0 + buffer.count }) else {
            free(object)
            return nil
        }
        return object
    }
}
