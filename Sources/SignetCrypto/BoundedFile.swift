import Foundation

/// A file that a setting or a command names, read whole up to a bound. The bound holds whatever
/// the path is: `/dev/zero`, a FIFO that never ends or a wrong multi-gigabyte file is refused
/// after `limit + 1` bytes instead of filling memory or hanging a start. A check of the size
/// before reading would not do: a character device's size is 0.
public enum BoundedFile {
    /// Why a read failed.
    public enum Failure: Error, Equatable, Sendable {
        /// It does not exist, cannot be opened, is a folder, or a read failed.
        case unreadable
        /// It holds more than the limit.
        case tooLarge
        /// Read as text, it is not UTF-8.
        case notText
    }

    /// The file's bytes, at most `limit` of them.
    public static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable }
        defer { try? handle.close() }
        let data: Data?
        do {
            data = try handle.read(upToCount: limit + 1)
        } catch {
            throw .unreadable
        }
        let bytes = data.map { [UInt8]($0) } ?? []
        guard bytes.count <= limit else { throw .tooLarge }
        return bytes
    }

    /// The file's text, at most `limit` bytes of UTF-8.
    public static func readText(_ path: String, limit: Int) throws(Failure) -> String {
        guard let text = String(validating: try read(path, limit: limit), as: UTF8.self) else { throw .notText }
        return text
    }

    /// The limit as an operator reads it: `64 KiB`, `1 MiB`.
    public static func describe(_ limit: Int) -> String {
        limit >= 1 << 20 && limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
    }
}
