import Glibc

/// Raises the open-file limit to its hard maximum: a server with thousands of connections, or
/// a load generator opening them, needs more than the usual 1,024 descriptors.
enum ResourceLimits {
    static func raiseOpenFiles() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
