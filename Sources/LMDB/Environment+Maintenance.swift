internal import CLMDB

extension Environment {
    /// Facts about the environment: map size, space used, readers.
    public func info() -> EnvironmentInfo {
        // LMDB reads them from the meta pages, in the map: not while a resize has it unmapped.
        resizeLock.withShared { infoHoldingResizeLock() }
    }

    /// ``info()`` for a caller that holds the resize lock, shared or exclusive.
    func infoHoldingResizeLock() -> EnvironmentInfo {
        let info = mdbEnvInfo(env)
        let stat = mdbEnvStat(env)
        return EnvironmentInfo(
            mapSize: info.me_mapsize,
            usedBytes: (info.me_last_pgno + 1) * Int(stat.ms_psize),
            lastTransactionID: info.me_last_txnid,
            maxReaders: Int(info.me_maxreaders),
            readersInUse: Int(info.me_numreaders),
            pageSize: Int(stat.ms_psize)
        )
    }

    /// Clears reader slots left by processes that died without closing their transactions.
    ///
    /// Runs once at open; call it again when ``LMDBError/readersFull`` is reported.
    ///
    /// - Returns: The number of stale slots cleared.
    @discardableResult
    public func checkReaders() throws -> Int {
        var dead: Int32 = 0
        try lmdbCheck(mdbReaderCheck(injector, env, &dead))
        return Int(dead)
    }

    /// Writes a consistent copy of the environment into the empty directory `destination`.
    ///
    /// Runs alongside writers (it uses a read transaction).
    ///
    /// - Parameter compact: Omit free pages and renumber (smaller copy, more CPU).
    public func copy(to destination: String, compact: Bool = true) throws {
        try resizeLock.withShared { () throws(LMDBError) -> Void in
            do throws(LMDBError) {
                try lmdbCheck(mdbEnvCopy2(injector, env, destination, compact ? UInt32(MDB_CP_COMPACT) : 0))
            } catch {
                // A short write on a full disk (liblmdb reports EIO) is named as such.
                throw DiskSpace.classify(error, at: destination)
            }
        }
    }
}
