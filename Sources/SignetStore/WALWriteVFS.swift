internal import CSQLite
import Foundation
import Synchronization

/// The SQLite VFS `signet-wal`: the system's default VFS, except that a WAL file's writes are
/// gathered and reach the file in one system call per commit instead of two per page.
///
/// SQLite writes each WAL frame as a 24-byte header and then the page (SQLite file format §4.1;
/// wal.c `walWriteOneFrame`), one `pwrite` each, and a commit's last frame carries the database
/// size in header bytes 4–7. Here writes that continue one another are kept in memory and
/// written, in the same order, when the commit frame's page arrives, before any other operation
/// on the file (a read, a sync, a size query, truncation, closing) and when the next write would
/// not continue them; so every commit is in the file before its `COMMIT` returns and before the
/// WAL index makes it visible, and a failed write fails that commit as it would have. The one
/// write SQLite makes after a commit frame's page, rewriting frame headers whose checksums
/// changed (`walRewriteChecksums`, each right after reading that frame), is written through.
/// Bytes on disk and their order are those SQLite would have written.
package enum WALWriteVFS {
    package static let name = "signet-wal"

    /// Whether the VFS is registered (once, on first use).
    package static let registered: Bool = register()

    /// Commits written with one call, and header rewrites passed straight through (for tests).
    package static var commitCount: Int { commits.load(ordering: .relaxed) }
    package static var writeThroughCount: Int { writesThrough.load(ordering: .relaxed) }
    static let commits = Atomic<Int>(0)
    static let writesThrough = Atomic<Int>(0)
    /// `xSync` calls on the WAL of the database at `path` (for tests: with `synchronous=FULL`,
    /// one per commit).
    package static func walSyncCount(_ path: String) -> Int { walSyncs.withLock { $0[path + "-wal", default: 0] } }
    static let walSyncs = Mutex<[String: Int]>([:])

    /// Our file object: SQLite's `sqlite3_file` (the methods pointer), the WAL buffer, then the
    /// default VFS's own file object.
    static let headerSize = 16

    nonisolated(unsafe) private static var defaultVFS: UnsafeMutablePointer<sqlite3_vfs>!
    nonisolated(unsafe) private static let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)

    private static func register() -> Bool {
        _ = SQLiteLibrary.configured
        guard let system = sqlite3_vfs_find(nil) else { return false }
        defaultVFS = system
        methods.initialize(to: walMethods())
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: system.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.szOsFile = system.pointee.szOsFile + Int32(headerSize)
        vfs.pointee.xOpen = { _, path, file, flags, outFlags in
            guard let file else { return SQLITE_MISUSE }
            let system = WALWriteVFS.defaultVFS!
            // Everything but a WAL: the default VFS's file object, in place.
            guard flags & SQLITE_OPEN_WAL != 0 else { return system.pointee.xOpen(system, path, file, flags, outFlags) }
            let real = (UnsafeMutableRawPointer(file) + WALWriteVFS.headerSize).assumingMemoryBound(to: sqlite3_file.self)
            let rc = system.pointee.xOpen(system, path, real, flags, outFlags)
            guard rc == SQLITE_OK else { return rc }
            let buffer = WALBuffer(real: real, path: path.map { String(cString: $0) } ?? "")
            UnsafeMutableRawPointer(file).storeBytes(of: Unmanaged.passRetained(buffer).toOpaque(), toByteOffset: 8, as: UnsafeMutableRawPointer.self)
            file.pointee.pMethods = UnsafePointer(WALWriteVFS.methods)
            return SQLITE_OK
        }
        return sqlite3_vfs_register(vfs, 0) == SQLITE_OK
    }

    static func buffer(_ file: UnsafeMutablePointer<sqlite3_file>?) -> WALBuffer {
        let raw = UnsafeMutableRawPointer(file!).load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
        return Unmanaged<WALBuffer>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Version 2 methods (no memory-mapped I/O, which SQLite uses for database files only): every
    /// one the default file's, after the pending writes where it could observe them.
    private static func walMethods() -> sqlite3_io_methods {
        var m = sqlite3_io_methods()
        m.iVersion = 2
        m.xClose = { file in
            let buffer = WALWriteVFS.buffer(file)
            let rc = buffer.flush()
            let closed = buffer.real.pointee.pMethods.pointee.xClose(buffer.real)
            Unmanaged.passUnretained(buffer).release()
            return rc != SQLITE_OK ? rc : closed
        }
        m.xRead = { file, out, amount, offset in WALWriteVFS.buffer(file).read(out, amount, offset) }
        m.xWrite = { file, data, amount, offset in WALWriteVFS.buffer(file).write(data!, Int(amount), offset) }
        m.xTruncate = { file, size in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xTruncate($0, size) }
        }
        m.xSync = { file, flags in
            let buffer = WALWriteVFS.buffer(file)
            WALWriteVFS.walSyncs.withLock { $0[buffer.path, default: 0] += 1 }
            return buffer.after { $0.pointee.pMethods.pointee.xSync($0, flags) }
        }
        m.xFileSize = { file, size in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xFileSize($0, size) }
        }
        m.xLock = { file, level in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xLock($0, level) }
        }
        m.xUnlock = { file, level in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xUnlock($0, level) }
        }
        m.xCheckReservedLock = { file, out in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xCheckReservedLock($0, out) }
        }
        m.xFileControl = { file, op, arg in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xFileControl($0, op, arg) }
        }
        m.xSectorSize = { file in
            let real = WALWriteVFS.buffer(file).real
            return real.pointee.pMethods.pointee.xSectorSize(real)
        }
        m.xDeviceCharacteristics = { file in
            let real = WALWriteVFS.buffer(file).real
            return real.pointee.pMethods.pointee.xDeviceCharacteristics(real)
        }
        m.xShmMap = { file, page, size, extend, out in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xShmMap($0, page, size, extend, out) }
        }
        m.xShmLock = { file, offset, n, flags in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xShmLock($0, offset, n, flags) }
        }
        m.xShmBarrier = { file in
            _ = WALWriteVFS.buffer(file).after { real in
                real.pointee.pMethods.pointee.xShmBarrier(real)
                return SQLITE_OK
            }
        }
        m.xShmUnmap = { file, delete in
            WALWriteVFS.buffer(file).after { $0.pointee.pMethods.pointee.xShmUnmap($0, delete) }
        }
        return m
    }
}

/// One WAL file's writes not yet made: a run of bytes that continue one another. Used by one
/// connection, on one thread at a time, like the connection itself.
final class WALBuffer {
    let real: UnsafeMutablePointer<sqlite3_file>
    private var bytes: [UInt8] = []
    private var start: Int64 = 0
    /// The last frame header gathered marks a commit: its page ends the commit.
    private var commitHeader = false
    /// Where the last read started: SQLite rewrites a frame header right after reading the frame.
    private var lastRead: Int64 = -1
    static let frameHeaderSize = 24
    /// Pending bytes past which they are written without waiting for the commit.
    static let limit = 256 * 1024
    static let chunk = 64 * 1024

    /// The WAL file's path.
    let path: String

    init(real: UnsafeMutablePointer<sqlite3_file>, path: String) {
        self.real = real
        self.path = path
        bytes.reserveCapacity(64 * 1024)
    }

    func write(_ data: UnsafeRawPointer, _ count: Int, _ offset: Int64) -> Int32 {
        if offset == lastRead {
            lastRead = -1
            WALWriteVFS.writesThrough.add(1, ordering: .relaxed)
            return after { $0.pointee.pMethods.pointee.xWrite($0, data, Int32(count), offset) }
        }
        if !bytes.isEmpty && offset != start + Int64(bytes.count) {
            let rc = flush()
            guard rc == SQLITE_OK else { return rc }
        }
        if bytes.isEmpty { start = offset }
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        if count == WALBuffer.frameHeaderSize {
            let header = data.assumingMemoryBound(to: UInt8.self)
            commitHeader = header[4] | header[5] | header[6] | header[7] != 0
            return SQLITE_OK
        }
        if commitHeader {
            commitHeader = false
            WALWriteVFS.commits.add(1, ordering: .relaxed)
            return flush()
        }
        return bytes.count >= WALBuffer.limit ? flush() : SQLITE_OK
    }

    func read(_ out: UnsafeMutableRawPointer?, _ count: Int32, _ offset: Int64) -> Int32 {
        let rc = after { $0.pointee.pMethods.pointee.xRead($0, out, count, offset) }
        lastRead = offset
        return rc
    }

    /// Writes what is pending, then runs `body` on the default VFS's file.
    func after(_ body: (UnsafeMutablePointer<sqlite3_file>) -> Int32) -> Int32 {
        let rc = flush()
        return rc == SQLITE_OK ? body(real) : rc
    }

    func flush() -> Int32 {
        guard !bytes.isEmpty else { return SQLITE_OK }
        commitHeader = false
        // The default VFS writes at most 128 KiB per call (os_unix.c `seekAndWrite`).
        let rc = bytes.withUnsafeBytes { all -> Int32 in
            var done = 0
            while done < all.count {
                let count = min(WALBuffer.chunk, all.count - done)
                let rc = real.pointee.pMethods.pointee.xWrite(real, all.baseAddress! + done, Int32(count), start + Int64(done))
                guard rc == SQLITE_OK else { return rc }
                done += count
            }
            return SQLITE_OK
        }
        bytes.removeAll(keepingCapacity: bytes.capacity <= 4 * WALBuffer.limit)
        return rc
    }
}
