import LMDB
import Testing

/// Read and write transactions: put, get, delete, options, nesting, atomicity.
struct TransactionTests {
    // MARK: Put, get, delete

    @Test func putGetAndDelete() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                #expect(try tx.put(bytes("one"), forKey: bytes("a"), in: db))
                try tx.put(bytes("two"), forKey: bytes("b"), in: db)
                try tx.put([], forKey: bytes("empty"), in: db)
                // A write transaction reads its own writes.
                #expect(try tx.value(forKey: bytes("a"), in: db) == bytes("one"))
            }
            try environment.read { tx throws in
                #expect(try tx.value(forKey: bytes("a"), in: db) == bytes("one"))
                #expect(try tx.value(forKey: bytes("b"), in: db) == bytes("two"))
                #expect(try tx.value(forKey: bytes("empty"), in: db) == [], "an empty value is not a missing one")
                #expect(try tx.value(forKey: bytes("zzz"), in: db) == nil)
                #expect(try tx.count(of: db) == 3)
            }
            try environment.write { tx throws in
                try tx.put(bytes("uno"), forKey: bytes("a"), in: db)
                #expect(try tx.delete(bytes("b"), in: db))
                #expect(try !tx.delete(bytes("b"), in: db), "deleting a missing key reports false")
            }
            try environment.read { tx throws in
                #expect(try tx.value(forKey: bytes("a"), in: db) == bytes("uno"))
                #expect(try tx.value(forKey: bytes("b"), in: db) == nil)
                #expect(try tx.count(of: db) == 2)
            }
        }
    }

    @Test func noOverwriteReportsAnExistingKeyAndKeepsItsValue() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                #expect(try tx.put(bytes("first"), forKey: bytes("k"), in: db, options: .noOverwrite))
                #expect(try !tx.put(bytes("second"), forKey: bytes("k"), in: db, options: .noOverwrite))
            }
            #expect(try environment.read { try $0.value(forKey: bytes("k"), in: db) } == bytes("first"))
        }
    }

    @Test func appendRequiresIncreasingKeys() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "log", options: .create) }
            try environment.write { tx throws in
                for seq in 1...1_000 as ClosedRange<UInt64> {
                    try tx.put(key(seq), forKey: key(seq), in: db, options: .append)
                }
            }
            #expect(throws: LMDBError.keyExists) {
                try environment.write { tx throws in try tx.put([0], forKey: key(500), in: db, options: .append) }
            }
            #expect(throws: LMDBError.keyExists) {
                try environment.write { tx throws in try tx.put([0], forKey: key(1_000), in: db, options: .append) }
            }
            _ = try environment.write { tx throws in try tx.put([0], forKey: key(1_001), in: db, options: .append) }
            #expect(try environment.read { try $0.count(of: db) } == 1_001)
            #expect(
                try environment.read { try $0.value(forKey: key(500), in: db) } == key(500),
                "the refused append changed nothing")
        }
    }

    @Test func reservedValuesAreFilledInPlace() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                try bytes("k").withUnsafeBytes { key in
                    try tx.put(count: 5, forKey: key, in: db) { buffer in
                        for index in buffer.indices { buffer[index] = UInt8(index + 1) }
                    }
                }
            }
            #expect(try environment.read { try $0.value(forKey: bytes("k"), in: db) } == [1, 2, 3, 4, 5])
        }
    }

    @Test func removeAllEmptiesADatabaseAndKeepsIt() throws {
        try withEnvironment { environment, _ in
            let (a, b) = try environment.write { tx throws in
                (try tx.openDatabase(named: "a", options: .create), try tx.openDatabase(named: "b", options: .create))
            }
            try environment.write { tx throws in
                for index in 0..<50 as Range<UInt64> {
                    try tx.put([1], forKey: key(index), in: a)
                    try tx.put([2], forKey: key(index), in: b)
                }
            }
            try environment.write { try $0.removeAll(in: a) }
            try environment.read { tx throws in
                #expect(try tx.count(of: a) == 0)
                #expect(try tx.count(of: b) == 50)
                _ = try tx.openDatabase(named: "a")
            }
            _ = try environment.write { try $0.put([3], forKey: key(1), in: a) }
            #expect(try environment.read { try $0.count(of: a) } == 1)
        }
    }

    @Test func statisticsAndTheMainDatabaseDescribeTheNamedDatabases() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "items", options: .create) }
            _ = try environment.write { try $0.openDatabase(named: "other", options: .create) }
            try environment.write { tx throws in
                for index in 0..<2_000 as Range<UInt64> {
                    try tx.put(Array(repeating: 1, count: 64), forKey: key(index), in: db)
                }
            }
            try environment.read { tx throws in
                let stats = try tx.statistics(of: db)
                #expect(stats.entries == 2_000)
                #expect(stats.depth >= 2)
                #expect(stats.leafPages > 1 && stats.branchPages >= 1)
                #expect(stats.bytes == (stats.leafPages + stats.branchPages + stats.overflowPages) * stats.pageSize)
                var names: [String] = []
                try tx.forEach(in: try tx.openMainDatabase()) { key, _ in
                    names.append(String(decoding: key, as: UTF8.self))
                    return true
                }
                #expect(names == ["items", "other"])
            }
        }
    }

    // MARK: Atomicity

    @Test func aThrowingWriteCommitsNothing() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            _ = try environment.write { try $0.put(bytes("before"), forKey: bytes("k"), in: db) }
            #expect(throws: Rollback()) {
                try environment.write { tx throws in
                    try tx.put(bytes("during"), forKey: bytes("k"), in: db)
                    try tx.put(bytes("new"), forKey: bytes("n"), in: db)
                    throw Rollback()
                }
            }
            try environment.read { tx throws in
                #expect(try tx.value(forKey: bytes("k"), in: db) == bytes("before"))
                #expect(try tx.value(forKey: bytes("n"), in: db) == nil)
            }
        }
    }

    @Test func aReaderKeepsItsSnapshotWhileAWriterCommits() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            _ = try environment.write { try $0.put(bytes("old"), forKey: bytes("k"), in: db) }
            try environment.read { tx throws in
                _ = try environment.write { try $0.put(bytes("new"), forKey: bytes("k"), in: db) }
                #expect(try tx.value(forKey: bytes("k"), in: db) == bytes("old"))
            }
            #expect(try environment.read { try $0.value(forKey: bytes("k"), in: db) } == bytes("new"))
        }
    }

    @Test func aNestedTransactionThatThrowsIsRolledBackAlone() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                try tx.put(bytes("parent"), forKey: bytes("p"), in: db)
                #expect(throws: Rollback()) {
                    try tx.nested { child throws in
                        try child.put(bytes("child"), forKey: bytes("c"), in: db)
                        try child.put(bytes("changed"), forKey: bytes("p"), in: db)
                        #expect(try child.value(forKey: bytes("p"), in: db) == bytes("changed"))
                        throw Rollback()
                    }
                }
                #expect(try tx.value(forKey: bytes("p"), in: db) == bytes("parent"))
                #expect(try tx.value(forKey: bytes("c"), in: db) == nil)
                let kept = try tx.nested { child throws -> Int in
                    try child.put(bytes("kept"), forKey: bytes("k"), in: db)
                    // Nesting goes deeper: the grandchild's rollback leaves the child's writes.
                    try? child.nested { grandchild throws -> Void in
                        try grandchild.put(bytes("lost"), forKey: bytes("g"), in: db)
                        throw Rollback()
                    }
                    return 42
                }
                #expect(kept == 42)
            }
            try environment.read { tx throws in
                #expect(try tx.value(forKey: bytes("p"), in: db) == bytes("parent"))
                #expect(try tx.value(forKey: bytes("c"), in: db) == nil)
                #expect(try tx.value(forKey: bytes("k"), in: db) == bytes("kept"))
                #expect(try tx.value(forKey: bytes("g"), in: db) == nil)
            }
        }
    }

    @Test func theParentStillRollsBackWhatItsNestedTransactionsCommitted() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            #expect(throws: Rollback()) {
                try environment.write { tx throws in
                    _ = try tx.nested { child throws in try child.put([1], forKey: bytes("c"), in: db) }
                    throw Rollback()
                }
            }
            #expect(try environment.read { try $0.value(forKey: bytes("c"), in: db) } == nil)
        }
    }

    // MARK: Concurrency

    @Test func concurrentWritersAreSerializedAndNoneIsLost() async throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        var configuration = Environment.Configuration()
        configuration.durability = .bulk
        let environment = try Environment.open(path: directory.path, configuration: configuration)
        let db = try environment.write { try $0.openDatabase(named: "counter", options: .create) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<100 {
                        try environment.write { tx throws in
                            let current = try tx.value(forKey: bytes("n"), in: db).map(number) ?? 0
                            try tx.put(key(current + 1), forKey: bytes("n"), in: db)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try environment.read { tx throws in try tx.value(forKey: bytes("n"), in: db) }
        #expect(total.map(number) == 800)
    }
}
