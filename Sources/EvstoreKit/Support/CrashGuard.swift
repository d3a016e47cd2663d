#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The line printed when the process dies of a memory fault, prepared in advance.
private nonisolated(unsafe) var crashLine: UnsafeMutablePointer<CChar>?
private nonisolated(unsafe) var crashLineLength = 0

/// Turns a crash inside the storage engine into one clear line and exit status 1.
///
/// LMDB trusts the pages of its data file; a damaged file can make it read through a bad
/// pointer. The tool then prints which store it was reading and how to check it, instead of a
/// stack trace. Set `EVSTORE_BACKTRACE=1` to keep the runtime's backtrace (for bug reports).
public enum CrashGuard {
    /// Installs the handler for `SIGSEGV` and `SIGBUS` (once per process, from the executable).
    public static func install() {
        guard getenv("EVSTORE_BACKTRACE") == nil else { return }
        setContext(nil)
        signal(SIGSEGV, crashHandler)
        signal(SIGBUS, crashHandler)
    }

    /// Names the store being read, for the crash line.
    public static func setContext(_ storePath: String?) {
        let line =
            if let storePath {
                "evstore: crashed reading \(storePath): its data file is damaged (check it with `mdb_stat -a \(storePath)`; restore a backup, or rerun with EVSTORE_BACKTRACE=1 to report a bug)\n"
            } else {
                "evstore: crashed (rerun with EVSTORE_BACKTRACE=1 for a backtrace to report)\n"
            }
        let previous = crashLine
        crashLine = strdup(line)
        crashLineLength = strlen(crashLine!)
        free(previous)
    }
}

private func crashHandler(_ signal: Int32) {
    if let crashLine { _ = write(2, crashLine, crashLineLength) }
    _exit(1)
}
