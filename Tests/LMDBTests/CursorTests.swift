import LMDB
import Testing

/// Cursors: ordered iteration, range scans, seeks, duplicate-sorted databases, writes.
struct CursorTests {
    /// A database holding the keys 0, 10, 20, … 990 (big-endian), each with its key as value.
    func filled(_ environment: Environment) throws -> Database {
        let db = try environment.write { try $0.openDatabase(named: "numbers", options: .create) }
        try environment.write { tx throws in
            // Inserted out of order: the database keeps them sorted.
            for index in (0..<100 as Range<UInt64>).reversed() {
                try tx.put(key(index * 10), forKey: key(index * 10), in: db)
            }
        }
        return db
    }

    @Test func iterationFollowsByteOrderBothWays() throws {
        try withEnvironment { environment, _ in
            let db = try filled(environment)
            let (forward, backward) = try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws -> ([UInt64], [UInt64]) in
                    var forward: [UInt64] = []
                    var entry = try cursor.first()
                    while let current = entry {
                        #expect(current.value.elementsEqual(current.key))
                        forward.append(number(current.key))
                        entry = try cursor.next()
                    }
                    var backward: [UInt64] = []
                    entry = try cursor.last()
                    while let current = entry {
                        backward.append(number(current.key))
                        entry = try cursor.previous()
                    }
                    return (forward, backward)
                }
            }
            #expect(forward == (0..<100).map { UInt64($0) * 10 })
            #expect(backward == forward.reversed())
        }
    }

    @Test(arguments: [(UInt64(95), UInt64(200)), (0, 0), (990, 5_000), (991, 2_000), (250, 250)])
    func rangeScansSeeExactlyTheKeysInRange(lower: UInt64, upper: UInt64) throws {
        try withEnvironment { environment, _ in
            let db = try filled(environment)
            let found = try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws -> [UInt64] in
                    var found: [UInt64] = []
                    var entry = try cursor.seek(atLeast: key(lower))
                    while let current = entry, number(current.key) <= upper {
                        found.append(number(current.key))
                        entry = try cursor.next()
                    }
                    return found
                }
            }
            let expected = (0..<100).map { UInt64($0) * 10 }.filter { $0 >= lower && $0 <= upper }
            #expect(found == expected)
        }
    }

    @Test func exactSeeksAndTheCurrentEntry() throws {
        try withEnvironment { environment, _ in
            let db = try filled(environment)
            try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws in
                    let hit = try key(420).withUnsafeBytes { try cursor.seek(exactly: $0) }
                    #expect(hit.map { number($0.key) } == 420)
                    #expect(try cursor.current().map { number($0.key) } == 420)
                    #expect(try cursor.next().map { number($0.key) } == 430)
                    let miss = try key(425).withUnsafeBytes { try cursor.seek(exactly: $0) }
                    #expect(miss == nil)
                    #expect(try cursor.seek(atLeast: key(991)) == nil, "past the last key")
                }
            }
        }
    }

    @Test func forEachStartsAtAKeyAndStopsWhenAsked() throws {
        try withEnvironment { environment, _ in
            let db = try filled(environment)
            let seen = try environment.read { tx throws -> [UInt64] in
                var seen: [UInt64] = []
                try key(555).withUnsafeBytes { start throws in
                    try tx.forEach(in: db, from: start) { key, _ in
                        seen.append(number(key))
                        return seen.count < 3
                    }
                }
                return seen
            }
            #expect(seen == [560, 570, 580])
        }
    }

    @Test func anEmptyDatabaseHasNoEntries() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "empty", options: .create) }
            try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws in
                    #expect(try cursor.first() == nil)
                    #expect(try cursor.last() == nil)
                    #expect(try cursor.seek(atLeast: key(0)) == nil)
                }
            }
        }
    }

    // MARK: Writing through a cursor

    @Test func writeCursorsPutAppendAndDelete() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                try tx.withWriteCursor(on: db) { cursor throws in
                    for index in 1...20 as ClosedRange<UInt64> {
                        try key(index).withUnsafeBytes { k throws in
                            try [UInt8(index)].withUnsafeBytes { v throws in
                                #expect(try cursor.put(v, forKey: k, options: .append))
                            }
                        }
                    }
                    let duplicate = try key(5).withUnsafeBytes { k throws in
                        try [0].withUnsafeBytes { v throws in try cursor.put(v, forKey: k, options: .noOverwrite) }
                    }
                    #expect(!duplicate)
                    // Delete every even key while walking.
                    var entry = try cursor.first()
                    while let current = entry {
                        if number(current.key) % 2 == 0 {
                            try cursor.deleteCurrent()
                            entry = try cursor.current()
                        } else {
                            entry = try cursor.next()
                        }
                    }
                    try key(100).withUnsafeBytes { k throws in
                        try cursor.put(count: 3, forKey: k) { buffer in buffer.copyBytes(from: [9, 9, 9]) }
                    }
                }
            }
            let entries = try environment.read { tx throws -> [(UInt64, [UInt8])] in
                var entries: [(UInt64, [UInt8])] = []
                try tx.forEach(in: db) { key, value in
                    entries.append((number(key), Array(value)))
                    return true
                }
                return entries
            }
            #expect(entries.map(\.0) == Array(stride(from: 1, through: 19, by: 2)) + [100])
            #expect(entries.first?.1 == [1])
            #expect(entries.last?.1 == [9, 9, 9])
        }
    }

    /// Runs of adjacent keys deleted in one pass, across many pages (which the deletes empty and
    /// merge): in the middle, up to the last key, and every key.
    @Test(arguments: [(UInt64(1_000), UInt64(4_000)), (0, 1), (4_999, 5_000), (2_500, 5_000), (0, 5_000)])
    func deleteRunRemovesExactlyTheRun(from: UInt64, to: UInt64) throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "run", options: .create) }
            let value = [UInt8](repeating: 7, count: 100)
            try environment.write { tx throws in
                for index in 0..<5_000 as Range<UInt64> { try tx.put(value, forKey: key(index), in: db) }
            }
            let deleted = try environment.write { tx throws -> Int in
                try tx.withWriteCursor(on: db) { cursor throws -> Int in
                    let first = try cursor.seek(atLeast: key(from))
                    return try cursor.deleteRun(from: first) { number($0.key) < to }
                }
            }
            #expect(deleted == Int(to - from))
            let remaining = try environment.read { tx throws -> [UInt64] in
                var keys: [UInt64] = []
                try tx.forEach(in: db) { key, _ in
                    keys.append(number(key))
                    return true
                }
                return keys
            }
            #expect(remaining == Array(0..<from) + Array(to..<5_000))
        }
    }

    // MARK: Duplicate-sorted databases

    @Test func duplicateSortedValuesAreOrderedPerKey() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write {
                try $0.openDatabase(named: "postings", options: [.create, .duplicateSort])
            }
            try environment.write { tx throws in
                for value in [30, 10, 20] as [UInt64] { try tx.put(key(value), forKey: bytes("term"), in: db) }
                try tx.put(key(1), forKey: bytes("other"), in: db)
                #expect(
                    try !tx.put(key(10), forKey: bytes("term"), in: db, options: .noDuplicateData), "the pair exists")
                #expect(try tx.put(key(40), forKey: bytes("term"), in: db, options: .noDuplicateData))
            }
            try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws in
                    let first = try bytes("term").withUnsafeBytes { try cursor.seek(exactly: $0) }
                    #expect(first.map { number($0.value) } == 10)
                    #expect(try cursor.duplicateCount() == 4)
                    var values: [UInt64] = [10]
                    while let next = try cursor.nextDuplicate() { values.append(number(next.value)) }
                    #expect(values == [10, 20, 30, 40])
                    let probe = try bytes("term").withUnsafeBytes { k throws in
                        try key(25).withUnsafeBytes { v throws in try cursor.seek(key: k, valueAtLeast: v) }
                    }
                    #expect(probe.map { number($0.value) } == 30)
                    _ = try cursor.first()
                    #expect(
                        try cursor.nextKey().map { String(decoding: $0.key, as: UTF8.self) } == "term",
                        "nextKey skips the other values of a key")
                }
            }
            try environment.write { tx throws in
                try bytes("term").withUnsafeBytes { k throws in
                    try key(20).withUnsafeBytes { v throws in #expect(try tx.delete(k, value: v, in: db)) }
                    try key(21).withUnsafeBytes { v throws in #expect(try !tx.delete(k, value: v, in: db)) }
                }
            }
            #expect(try environment.read { try $0.count(of: db) } == 4, "3 values of term + 1 of other")
        }
    }

    @Test func fixedSizeDuplicatesAreWrittenAndReadInBulk() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write {
                try $0.openDatabase(named: "postings", options: [.create, .duplicateSort, .duplicateFixed])
            }
            // Enough values to span several pages, so bulk reads take more than one call.
            let values = (0..<3_000 as Range<UInt64>).map { $0 * 3 }
            let packed = values.flatMap(key)
            try environment.write { tx throws in
                try tx.withWriteCursor(on: db) { cursor throws in
                    try packed.withUnsafeBytes { v throws in
                        try bytes("t").withUnsafeBytes { k throws in
                            try cursor.putDuplicates(v, elementSize: 8, forKey: k)
                        }
                    }
                }
            }
            let (read, pages) = try environment.read { tx throws in
                try tx.withCursor(on: db) { cursor throws -> ([UInt64], Int) in
                    _ = try bytes("t").withUnsafeBytes { try cursor.seek(exactly: $0) }
                    #expect(try cursor.duplicateCount() == values.count)
                    var read: [UInt64] = []
                    var pages = 0
                    var page = try cursor.currentMultiple()
                    while let current = page {
                        pages += 1
                        #expect(current.value.count % 8 == 0)
                        for offset in stride(from: 0, to: current.value.count, by: 8) {
                            read.append(number(UnsafeRawBufferPointer(rebasing: current.value[offset..<offset + 8])))
                        }
                        page = try cursor.nextMultiple()
                    }
                    return (read, pages)
                }
            }
            #expect(read == values)
            #expect(pages > 1)
        }
    }
}
