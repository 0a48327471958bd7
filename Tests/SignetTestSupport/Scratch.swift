public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one directory a test process writes its files in (databases, configuration files, keys,
/// logs, the browser's downloads), so that a test run leaves nothing behind in the system's
/// temporary directory: it is removed when the process exits, and a process that did not get
/// that far (killed, crashed) has its directory removed by the next test process.
///
/// Before it, each run of the suite left about 300 files and directories in /tmp.
public enum Scratch {
    static let prefix = "signet-tests-"

    /// `signet-tests-<pid>` in the system's temporary directory, made on first use.
    public static let directory: URL = {
        let system = FileManager.default.temporaryDirectory
        removeAbandoned(in: system)
        let directory = system.appendingPathComponent("\(prefix)\(getpid())")
        try? FileManager.default.removeItem(at: directory)  // a dead process's, whose PID this one got
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot make the test scratch directory \(directory.path): \(error)")
        }
        atexit { try? FileManager.default.removeItem(at: Scratch.directory) }
        return directory
    }()

    /// A fresh path in ``directory``: `prefix-<UUID>suffix`.
    public static func path(_ prefix: String, _ suffix: String = "") -> String {
        directory.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)").path
    }

    /// Removes the scratch directories of test processes that no longer run.
    static func removeAbandoned(in system: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: system.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH { try? FileManager.default.removeItem(at: system.appendingPathComponent(name)) }
        }
    }
}
