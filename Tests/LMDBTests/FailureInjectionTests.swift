#if ENABLE_MOCKING
    import Foundation
    import LMDB
    import Testing

    /// Forced failures of LMDB calls (debug builds): each is reported as its named error, leaves the
    /// environment unchanged, and the next call succeeds.
    struct FailureInjectionTests {
        func prepared(_ environment: Environment) throws -> Database {
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            _ = try environment.write { try $0.put(bytes("before"), forKey: bytes("k"), in: db) }
            return db
        }

        func value(_ environment: Environment, _ db: Database) throws -> [UInt8]? {
            try environment.read { try $0.value(forKey: bytes("k"), in: db) }
        }

        @Test func aFailedCommitWritesNothingAndTheNextWriteSucceeds() throws {
            try withEnvironment { environment, _ in
                let db = try prepared(environment)
                let transactions = environment.info().lastTransactionID
                environment._forceFailure(.txnCommit, error: .ioError)
                #expect(throws: LMDBError.ioError) {
                    try environment.write { tx throws in
                        try tx.put(bytes("during"), forKey: bytes("k"), in: db)
                        try tx.put(bytes("new"), forKey: bytes("n"), in: db)
                    }
                }
                #expect(try value(environment, db) == bytes("before"))
                #expect(try environment.read { try $0.count(of: db) } == 1)
                #expect(environment.info().lastTransactionID == transactions)
                _ = try environment.write { try $0.put(bytes("after"), forKey: bytes("k"), in: db) }
                #expect(try value(environment, db) == bytes("after"))
            }
        }

        @Test(arguments: [LMDBError.ioError, .noSpace, .transactionFull, .badValueSize])
        func aFailedPutAbortsTheTransaction(error: LMDBError) throws {
            try withEnvironment { environment, _ in
                let db = try prepared(environment)
                environment._forceFailure(.put, error: error)
                #expect(throws: error) {
                    try environment.write { tx throws in
                        try tx.put(bytes("during"), forKey: bytes("k"), in: db)
                    }
                }
                #expect(try value(environment, db) == bytes("before"))
                _ = try environment.write { try $0.put(bytes("after"), forKey: bytes("k"), in: db) }
                #expect(try value(environment, db) == bytes("after"))
            }
        }

        @Test func failuresAreCountedAndThenStop() throws {
            try withEnvironment { environment, _ in
                let db = try prepared(environment)
                environment._forceFailure(.get, error: .ioError, times: 2)
                #expect(throws: LMDBError.ioError) { try value(environment, db) }
                #expect(throws: LMDBError.ioError) { try value(environment, db) }
                #expect(try value(environment, db) == bytes("before"))
            }
        }

        @Test func aFailedBeginFailsReadsAndWrites() throws {
            try withEnvironment { environment, _ in
                let db = try prepared(environment)
                environment._forceFailure(.txnBegin, error: .readersFull)
                #expect(throws: LMDBError.readersFull) { try value(environment, db) }
                environment._forceFailure(.txnBegin, error: .ioError)
                #expect(throws: LMDBError.ioError) {
                    try environment.write { try $0.put([1], forKey: bytes("k"), in: db) }
                }
                #expect(try value(environment, db) == bytes("before"))
            }
        }

        @Test func aFailedCursorPutIsReported() throws {
            try withEnvironment { environment, _ in
                let db = try prepared(environment)
                environment._forceFailure(.cursorPut, error: .ioError)
                #expect(throws: LMDBError.ioError) {
                    try environment.write { tx throws in
                        try tx.withWriteCursor(on: db) { cursor throws in
                            try bytes("z").withUnsafeBytes { k throws in
                                try [1].withUnsafeBytes { v throws in _ = try cursor.put(v, forKey: k) }
                            }
                        }
                    }
                }
                #expect(try environment.read { try $0.count(of: db) } == 1)
            }
        }

        @Test func aForcedMapFullGrowsTheMapAndRetries() throws {
            try withEnvironment({ $0.mapSize = 1 << 20 }) { environment, _ in
                let db = try prepared(environment)
                environment._forceFailure(.put, error: .mapFull)
                var attempts = 0
                try environment.write { tx throws in
                    attempts += 1
                    try tx.put(bytes("grown"), forKey: bytes("k"), in: db)
                }
                #expect(attempts == 2)
                #expect(environment.info().mapSize > 1 << 20)
                #expect(try value(environment, db) == bytes("grown"))
            }
        }

        /// `info()` reads the meta pages, which are in the map: it must not run while a resize
        /// has the map unmapped. Each forced `MAP_RESIZED` below makes the reader adopt the map
        /// size anew (unmap, map again), 5,000 times, while other threads ask for `info()`.
        @Test func infoWaitsWhileTheMapIsReplaced() async {
            await #expect(processExitsWith: .success) {
                let directory = TestDirectory()
                defer { directory.remove() }
                let environment = try Environment.open(path: directory.path)
                environment._forceFailure(.txnBegin, error: .mapResized, times: 5_000)
                let done = Flag()
                let askers = (0..<2).map { _ in
                    Thread {
                        while !done.isSet { _ = environment.info() }
                    }
                }
                for asker in askers { asker.start() }
                try environment.read { _ in }  // 5,000 adoptions of the map size, then the read
                done.set()
            }
        }

        // MARK: Every LMDB function

        /// The functions called while opening an environment, forced through the path.
        static let openingFunctions: Set<LMDBFunction> = [
            .envCreate, .envSetMaxDatabases, .envSetMaxReaders, .envSetMapSize, .envOpen,
        ]

        /// Forces `function` to fail once, then runs an operation that calls it: for a function
        /// called while opening, the open of a second environment at `directory/other`.
        func forceAndCall(
            _ function: LMDBFunction, _ environment: Environment, _ db: Database, _ directory: TestDirectory
        )
            throws
        {
            func force() { environment._forceFailure(function, error: .ioError) }
            switch function {
            case .envCreate, .envSetMaxDatabases, .envSetMaxReaders, .envSetMapSize, .envOpen:
                let path = directory.appending("other")
                Environment._forceFailure(function, error: .ioError, opening: path)
                _ = try Environment.open(path: path)
            case .envSetFlags:
                force()
                try environment.setDurability(.relaxed)
            case .envSync:
                force()
                try environment.sync()
            case .envCopy:
                let copy = directory.appending("copy")
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                force()
                try environment.copy(to: copy)
            case .readerCheck:
                force()
                try environment.checkReaders()
            case .txnBegin, .txnCommit, .put:
                force()
                _ = try environment.write { try $0.put(bytes("during"), forKey: bytes("k"), in: db) }
            case .txnRenew:
                _ = try value(environment, db)  // leaves a read transaction in the pool
                force()
                _ = try value(environment, db)
            case .nestedTxnBegin, .nestedTxnCommit:
                force()
                try environment.write { tx throws in
                    _ = try tx.nested { try $0.put(bytes("during"), forKey: bytes("k"), in: db) }
                }
            case .dbiOpen:
                force()
                _ = try environment.read { try $0.openDatabase(named: "db") }
            case .stat:
                force()
                _ = try environment.read { try $0.count(of: db) }
            case .get:
                force()
                _ = try value(environment, db)
            case .del:
                force()
                _ = try environment.write { try $0.delete(bytes("k"), in: db) }
            case .drop:
                force()
                try environment.write { try $0.removeAll(in: db) }
            case .cursorOpen:
                force()
                try environment.read { tx throws in try tx.withCursor(on: db) { _ in } }
            case .cursorGet:
                force()
                _ = try environment.read { tx throws in try tx.withCursor(on: db) { try $0.first()?.key.count } }
            case .cursorPut:
                force()
                try environment.write { tx throws in
                    try tx.withWriteCursor(on: db) { cursor throws in
                        try bytes("z").withUnsafeBytes { k throws in
                            try [1].withUnsafeBytes { v throws in _ = try cursor.put(v, forKey: k) }
                        }
                    }
                }
            case .cursorDel:
                force()
                try environment.write { tx throws in
                    try tx.withWriteCursor(on: db) { cursor throws in
                        _ = try cursor.first()
                        try cursor.deleteCurrent()
                    }
                }
            case .cursorCount:
                force()
                _ = try environment.read { tx throws in
                    try tx.withCursor(on: db) { cursor throws in
                        _ = try cursor.first()
                        return try cursor.duplicateCount()
                    }
                }
            }
        }

        /// Every LMDB function can be forced to fail: the operation that calls it throws the forced
        /// error, changes nothing, and the environment works as before afterwards.
        @Test(arguments: LMDBFunction.allCases)
        func everyFunctionCanBeForcedToFail(function: LMDBFunction) throws {
            try withEnvironment { environment, directory in
                let db = try prepared(environment)
                #expect(throws: LMDBError.ioError, "\(function)") {
                    try forceAndCall(function, environment, db, directory)
                }
                #expect(try value(environment, db) == bytes("before"), "\(function)")
                _ = try environment.write { try $0.put(bytes("after"), forKey: bytes("k"), in: db) }
                #expect(try value(environment, db) == bytes("after"), "\(function)")
                if Self.openingFunctions.contains(function) {
                    let other = try Environment.open(path: directory.appending("other"))
                    let otherDB = try other.write { try $0.openDatabase(named: "db", options: .create) }
                    _ = try other.write { try $0.put(bytes("after"), forKey: bytes("k"), in: otherDB) }
                    #expect(try value(other, otherDB) == bytes("after"), "\(function)")
                }
            }
        }

        @Test func failuresAreForcedPerEnvironment() throws {
            try withEnvironment { first, _ in
                try withEnvironment { second, _ in
                    let a = try prepared(first)
                    let b = try prepared(second)
                    first._forceFailure(.get, error: .ioError)
                    #expect(try value(second, b) == bytes("before"), "another environment is not affected")
                    #expect(throws: LMDBError.ioError) { try value(first, a) }
                }
            }
        }
    }
#endif
