internal import CLMDB

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// An error returned by LMDB or by the operating system underneath it.
///
/// Match errors by their named codes:
///
/// ```swift
/// do {
///     try environment.write { tx in try tx.put(value, forKey: key, in: db) }
/// } catch LMDBError.mapFull {
///     // only when automatic growth is disabled
/// }
/// ```
public struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The LMDB return code (negative, `-30799` … `-30780`) or an `errno` value (positive).
    public let code: Int32

    /// Creates an error from a raw LMDB or `errno` code.
    public init(code: Int32) {
        self.code = code
    }

    /// A human-readable message, as given by `mdb_strerror`, with the code.
    public var description: String {
        mdbStrerror(code) + " (\(code))"
    }

    /// What went wrong in a few lower-case words, without the code: the system's text for an
    /// `errno` value (`permission denied`, `no such file or directory`), LMDB's for its own codes
    /// (`MDB_INVALID: File is not an LMDB file`).
    ///
    /// ```swift
    /// LMDBError.permissionDenied.reason   // "permission denied"
    /// ```
    public var reason: String {
        let text = mdbStrerror(code)
        guard code > 0, let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// Allows `catch LMDBError.mapFull { … }`.
    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError)?.code == pattern.code
    }

    /// A key/data pair already exists (`MDB_KEYEXIST`).
    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// No matching key/data pair found (`MDB_NOTFOUND`).
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// A requested page was not found: the file is corrupt (`MDB_PAGE_NOTFOUND`).
    public static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    /// The located page was of the wrong type: the file is corrupt (`MDB_CORRUPTED`).
    public static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// An update of the meta page failed, or the environment had a fatal error (`MDB_PANIC`).
    public static let panic = LMDBError(code: MDB_PANIC)
    /// The environment was written by an incompatible LMDB version (`MDB_VERSION_MISMATCH`).
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// The file is not an LMDB data file (`MDB_INVALID`).
    public static let invalid = LMDBError(code: MDB_INVALID)
    /// The environment map size is exhausted (`MDB_MAP_FULL`).
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// The maximum number of named databases was reached (`MDB_DBS_FULL`).
    public static let databasesFull = LMDBError(code: MDB_DBS_FULL)
    /// The reader lock table is full (`MDB_READERS_FULL`).
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// A transaction has too many dirty pages (`MDB_TXN_FULL`).
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    /// Another process grew the map beyond this process's mapping (`MDB_MAP_RESIZED`).
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// The operation is incompatible with the database or its flags (`MDB_INCOMPATIBLE`).
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    /// A key or value has an unsupported size (`MDB_BAD_VALSIZE`).
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The transaction can no longer be used (`MDB_BAD_TXN`).
    public static let badTransaction = LMDBError(code: MDB_BAD_TXN)
    /// No space left on the device (`ENOSPC`).
    public static let noSpace = LMDBError(code: ENOSPC)
    /// An input/output error (`EIO`).
    public static let ioError = LMDBError(code: EIO)
    /// Permission denied (`EACCES`).
    public static let permissionDenied = LMDBError(code: EACCES)
    /// The operation is not permitted, for instance on an immutable file (`EPERM`).
    public static let operationNotPermitted = LMDBError(code: EPERM)
    /// No such file or directory (`ENOENT`).
    public static let noSuchFile = LMDBError(code: ENOENT)
    /// Not a directory (`ENOTDIR`).
    public static let notDirectory = LMDBError(code: ENOTDIR)
    /// An invalid argument (`EINVAL`).
    public static let invalidArgument = LMDBError(code: EINVAL)
    /// Out of memory (`ENOMEM`).
    public static let outOfMemory = LMDBError(code: ENOMEM)
}

/// Throws the LMDB error for a non-zero return code.
@inline(__always)
func lmdbCheck(_ rc: Int32) throws(LMDBError) {
    if rc != 0 { throw LMDBError(code: rc) }
}
