import Foundation
import LMDB
import Testing

/// Opening environments: directories, one instance per path, read-only mode, information,
/// durability, copies.
struct EnvironmentTests {
    // MARK: Opening

    @Test func openCreatesMissingDirectoriesAndAnEmptyEnvironment() throws {
        let root = TestDirectory()
        defer { root.remove() }
        let path = root.appending("a/b/c")
        let environment = try Environment.open(path: path)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(FileManager.default.fileExists(atPath: path + "/data.mdb"))
        #expect(FileManager.default.fileExists(atPath: path + "/lock.mdb"))
        let names = try environment.read { tx throws in try tx.count(of: try tx.openMainDatabase()) }
        #expect(names == 0)
    }

    @Test(arguments: [4, 126, 512, 1000])
    func theLockTableIsBackedByDiskSpaceAndKeepsItsReaderLimit(maxReaders: Int) throws {
        let root = TestDirectory()
        defer { root.remove() }
        var configuration = Environment.Configuration()
        configuration.maxReaders = maxReaders
        let environment = try Environment.open(path: root.appending("env"), configuration: configuration)
        // A sparse lock file is what turned a full disk into SIGBUS: every block must be allocated.
        var status = stat()
        #expect(stat(root.appending("env/lock.mdb"), &status) == 0)
        #expect(status.st_size > 64 * maxReaders)
        #expect(
            Int(status.st_blocks) * 512 >= Int(status.st_size),
            "lock.mdb has holes: \(status.st_blocks) blocks for \(status.st_size) bytes")
        #expect(environment.info().maxReaders == maxReaders, "the lock file's size set another reader limit")
    }

    @Test func openingTheSamePathTwiceReturnsTheSameInstance() throws {
        let root = TestDirectory()
        defer { root.remove() }
        let path = root.appending("env")
        let first = try Environment.open(path: path)
        #expect(try Environment.open(path: path) === first)
        #expect(try Environment.open(path: path + "/") === first, "a trailing slash names the same directory")
        #expect(try Environment.open(path: root.path + "/./env/../env") === first, "so do . and .. components")
        try FileManager.default.createSymbolicLink(atPath: root.appending("link"), withDestinationPath: path)
        #expect(try Environment.open(path: root.appending("link")) === first, "and a symbolic link to it")

        // The shared instance sees writes made through the other handle at once.
        let db = try first.write { try $0.openDatabase(named: "db", options: .create) }
        _ = try first.write { try $0.put(bytes("v"), forKey: bytes("k"), in: db) }
        let second = try Environment.open(path: path)
        #expect(try second.read { try $0.value(forKey: bytes("k"), in: db) } == bytes("v"))
        #expect(first.path == second.path && !first.path.contains(".."))
    }

    @Test func aReleasedEnvironmentCanBeOpenedAgainWithItsData() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        try EnvironmentTests.store(bytes("kept"), in: try Environment.open(path: directory.path))
        #expect(try EnvironmentTests.storedValue(at: directory.path) == bytes("kept"))
    }

    /// An instance still held after its files were removed is not returned for the path: what
    /// is written through the new open lands in the new file, and stays there.
    @Test func anInstanceWhoseFilesWereRemovedIsNotReturnedForThePath() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        let old = try Environment.open(path: directory.path)
        _ = try old.write { try $0.openDatabase(named: "db", options: .create) }
        for file in ["data.mdb", "lock.mdb"] { try FileManager.default.removeItem(atPath: directory.appending(file)) }
        do {
            let new = try Environment.open(path: directory.path)
            #expect(new !== old)
            #expect(try Environment.open(path: directory.path) === new)
            try EnvironmentTests.store(bytes("kept"), in: new)
        }
        withExtendedLifetime(old) {}
        #expect(try EnvironmentTests.storedValue(at: directory.path) == bytes("kept"))
    }

    /// Writes `value` under key `k` of database `db`.
    private static func store(_ value: [UInt8], in environment: Environment) throws {
        let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
        _ = try environment.write { try $0.put(value, forKey: bytes("k"), in: db) }
    }

    /// The value under key `k` of database `db` of the environment at `path`, opened anew.
    private static func storedValue(at path: String) throws -> [UInt8]? {
        try Environment.open(path: path).read { tx throws in
            try tx.value(forKey: bytes("k"), in: try tx.openDatabase(named: "db"))
        }
    }

    @Test func aFileIsNotADirectory() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let file = directory.appending("file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        #expect(throws: LMDBError.notDirectory) { try Environment.open(path: file) }
        var readOnly = Environment.Configuration()
        readOnly.readOnly = true
        #expect(throws: LMDBError.notDirectory) { try Environment.open(path: file, configuration: readOnly) }
    }

    @Test func aForeignDataFileIsInvalid() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let garbage = Data((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        _ = FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: garbage)
        #expect(throws: LMDBError.invalid) { try Environment.open(path: directory.path) }
        #expect(FileManager.default.contents(atPath: directory.appending("data.mdb")) == garbage, "left untouched")
    }

    @Test func withoutCreatingDirectoriesAMissingPathIsReported() throws {
        let directory = TestDirectory()
        var configuration = Environment.Configuration()
        configuration.createsDirectory = false
        #expect(throws: LMDBError.noSuchFile) {
            try Environment.open(path: directory.path, configuration: configuration)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    // MARK: Read-only

    @Test func aReadOnlyEnvironmentReadsButCreatesNothing() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        do {
            let environment = try Environment.open(path: directory.path)
            let db = try environment.write { try $0.openDatabase(named: "notes", options: .create) }
            _ = try environment.write { try $0.put(bytes("hello"), forKey: bytes("k"), in: db) }
        }
        var configuration = Environment.Configuration()
        configuration.readOnly = true
        let environment = try Environment.open(path: directory.path, configuration: configuration)
        #expect(environment.configuration.readOnly)
        let db = try environment.openDatabases { tx throws in try tx.openDatabase(named: "notes") }
        #expect(try environment.read { try $0.value(forKey: bytes("k"), in: db) } == bytes("hello"))
        #expect(throws: LMDBError.notFound) {
            try environment.openDatabases { tx throws in try tx.openDatabase(named: "missing") }
        }
        // A writable open of a path this process holds read-only is refused, not silently downgraded.
        #expect(throws: LMDBError.incompatible) { try Environment.open(path: directory.path) }
    }

    @Test func aReadOnlyEnvironmentOfAMissingPathIsNotCreated() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        var configuration = Environment.Configuration()
        configuration.readOnly = true
        #expect(throws: LMDBError.noSuchFile) {
            try Environment.open(path: directory.path, configuration: configuration)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func aReadOnlyOpenCreatesNoLockFileWhereThereIsNoEnvironment() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        var configuration = Environment.Configuration()
        configuration.readOnly = true
        // A directory without data.mdb, then one whose data.mdb is not an LMDB file.
        #expect(throws: LMDBError.noSuchFile) {
            try Environment.open(path: directory.path, configuration: configuration)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        let garbage = Data((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        _ = FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: garbage)
        #expect(throws: LMDBError.invalid) { try Environment.open(path: directory.path, configuration: configuration) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["data.mdb"])
    }

    @Test func aReadOnlyEnvironmentUsesItsLockFileWhenItMay() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        do {
            let environment = try Environment.open(path: directory.path)
            #expect(environment.usesLockFile)
            _ = try environment.write { try $0.openDatabase(named: "notes", options: .create) }
        }
        try FileManager.default.removeItem(atPath: directory.appending("lock.mdb"))
        var configuration = Environment.Configuration()
        configuration.readOnly = true
        let environment = try Environment.open(path: directory.path, configuration: configuration)
        #expect(environment.usesLockFile == (access(directory.path, W_OK) == 0))
        #expect(FileManager.default.fileExists(atPath: directory.appending("lock.mdb")) == environment.usesLockFile)
    }

    @Test func aWriteOnAReadOnlyEnvironmentIsAProgrammerError() async throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        do {
            let environment = try Environment.open(path: directory.path)
            _ = try environment.write { try $0.openDatabase(named: "notes", options: .create) }
        }
        let path = directory.path
        await #expect(processExitsWith: .failure) { [path = path as String] in
            var configuration = Environment.Configuration()
            configuration.readOnly = true
            let environment = try Environment.open(path: path, configuration: configuration)
            try environment.write { tx throws in _ = try tx.openDatabase(named: "notes", options: []) }
        }
    }

    // MARK: Information and maintenance

    @Test func infoReportsTheConfiguration() throws {
        try withEnvironment({
            $0.mapSize = 4 << 20
            $0.maxReaders = 77
        }) { environment, _ in
            let info = environment.info()
            #expect(info.mapSize == 4 << 20)
            #expect(info.maxReaders == 77)
            #expect(info.pageSize >= 4096)
            #expect(info.usedBytes >= 2 * info.pageSize)
            #expect(environment.maxKeySize == 511)
            #expect(Environment.libraryVersion.hasPrefix("0.9."))
            #expect(try environment.checkReaders() == 0)

            let before = environment.info().lastTransactionID
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            _ = try environment.write { try $0.put([1], forKey: [1], in: db) }
            #expect(environment.info().lastTransactionID == before + 2)
            #expect(try environment.read { $0.id } == before + 2)
        }
    }

    @Test func durabilityCanChangeAndBulkWritesSurviveASync() throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        do {
            var configuration = Environment.Configuration()
            configuration.durability = .bulk
            let environment = try Environment.open(path: directory.path, configuration: configuration)
            #expect(environment.durability == .bulk)
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            for index in 0..<100 as Range<UInt64> {
                _ = try environment.write { try $0.put(key(index), forKey: key(index), in: db) }
            }
            try environment.sync()
            try environment.setDurability(.relaxed)
            #expect(environment.durability == .relaxed)
            try environment.setDurability(.durable)
            #expect(environment.durability == .durable)
            _ = try environment.write { try $0.put(bytes("last"), forKey: key(1_000), in: db) }
        }
        let environment = try Environment.open(path: directory.path)
        let count = try environment.read { tx throws in try tx.count(of: try tx.openDatabase(named: "db")) }
        #expect(count == 101)
        #expect(
            [Environment.Durability.durable, .relaxed, .bulk].map(\.description) == ["durable", "relaxed", "bulk"])
    }

    @Test func aCopyIsAConsistentEnvironment() throws {
        try withEnvironment { environment, directory in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            try environment.write { tx throws in
                for index in 0..<500 as Range<UInt64> {
                    try tx.put(Array(repeating: 7, count: 100), forKey: key(index), in: db)
                }
            }
            try environment.write { tx throws in
                for index in stride(from: 0, to: 500, by: 2) as StrideTo<UInt64> { try tx.delete(key(index), in: db) }
            }
            let destination = directory.appending("copy")
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            try environment.copy(to: destination)
            let copy = try Environment.open(path: destination)
            #expect(copy !== environment)
            let keys = try copy.read { tx throws -> [UInt64] in
                var keys: [UInt64] = []
                try tx.forEach(in: try tx.openDatabase(named: "db")) { key, _ in
                    keys.append(number(key))
                    return true
                }
                return keys
            }
            #expect(keys == Array(stride(from: 1, to: 500, by: 2)))
        }
    }
}
