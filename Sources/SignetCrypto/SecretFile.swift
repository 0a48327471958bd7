public import Foundation

/// A file that holds secrets (a key-encryption key, tokens, an authenticator's keys), readable
/// by its owner only from its first byte on.
public enum SecretFile {
    /// Writes `data` to a new file opened 0600 and renames it over `path`. Foundation's atomic
    /// write makes its temporary file with the umask's permissions, and setting 0600 after it
    /// leaves a moment in which others may read the secret; this leaves none.
    public static func save(_ data: Data, to path: String) throws {
        let temporary = path + ".\(UUID().uuidString).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary]) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == data.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
