import CSQLite

/// SQLite's process-wide settings, applied once before the library first initializes:
/// `sqlite3_config` is refused after `sqlite3_initialize` (SQLite C interface, "Configuring The
/// SQLite Library"). Every path of this module that opens a database touches ``configured``
/// first.
///
/// The one setting: no memory statistics (`SQLITE_CONFIG_MEMSTATUS` 0). With them on, every
/// allocation SQLite makes takes a process-wide mutex to count itself; Signet never reads the
/// counts (`sqlite3_memory_used`, a soft heap limit). Off, a sign-in runs about 11.5k fewer of
/// its 1.95M instructions (`scripts/bench-callgrind.sh`, two alternating pairs: SQLite's share
/// 85.5k to 78-81k, the C library's mutexes 5-7k).
package enum SQLiteLibrary {
    /// Whether the settings took effect (false only if something in this process initialized
    /// SQLite before this module did).
    package static let configured: Bool = signet_sqlite_memstatus_off() == SQLITE_OK
}
