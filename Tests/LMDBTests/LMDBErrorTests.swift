import Foundation
import LMDB
import Testing

/// Errors carry their LMDB or `errno` code, match by name in `catch` clauses, and describe
/// themselves with LMDB's own message.
struct LMDBErrorTests {
    // MARK: Named codes

    static let named: [(LMDBError, Int32)] = [
        (.keyExists, -30799), (.notFound, -30798), (.pageNotFound, -30797), (.corrupted, -30796),
        (.panic, -30795), (.versionMismatch, -30794), (.invalid, -30793), (.mapFull, -30792),
        (.databasesFull, -30791), (.readersFull, -30790), (.transactionFull, -30788), (.mapResized, -30785),
        (.incompatible, -30784), (.badValueSize, -30781), (.badTransaction, -30782),
        (.noSpace, ENOSPC), (.ioError, EIO), (.permissionDenied, EACCES), (.operationNotPermitted, EPERM),
        (.noSuchFile, ENOENT),
        (.notDirectory, ENOTDIR), (.invalidArgument, EINVAL), (.outOfMemory, ENOMEM),
    ]

    @Test(arguments: 0..<LMDBErrorTests.named.count)
    func namedErrorsHaveTheirLMDBCodes(index: Int) {
        let (error, code) = LMDBErrorTests.named[index]
        #expect(error.code == code)
        #expect(error == LMDBError(code: code))
    }

    @Test func namedCodesMatchInCatchClauses() {
        func classify(_ error: any Error) -> String {
            do { throw error } catch LMDBError.mapFull {
                return "map full"
            } catch LMDBError.keyExists {
                return "key exists"
            } catch LMDBError.ioError {
                return "io"
            } catch {
                return "other"
            }
        }
        #expect(classify(LMDBError(code: -30792)) == "map full")
        #expect(classify(LMDBError.keyExists) == "key exists")
        #expect(classify(LMDBError(code: EIO)) == "io")
        #expect(classify(LMDBError.notFound) == "other")
        #expect(classify(CocoaError(.fileNoSuchFile)) == "other", "a foreign error never matches a code")
    }

    @Test func descriptionsUseLMDBMessagesAndTheCode() {
        #expect(LMDBError.mapFull.description == "MDB_MAP_FULL: Environment mapsize limit reached (-30792)")
        #expect(LMDBError.keyExists.description == "MDB_KEYEXIST: Key/data pair already exists (-30799)")
        #expect(LMDBError.notFound.description.hasPrefix("MDB_NOTFOUND"))
        #expect(LMDBError.invalid.description.hasPrefix("MDB_INVALID: File is not an LMDB file"))
        // errno values get the C library's message.
        #expect(LMDBError.ioError.description == String(cString: strerror(EIO)) + " (\(EIO))")
        #expect(LMDBError.noSpace.description.contains("space"))
    }

    @Test func reasonsAreTheMessagesWithoutTheCode() {
        #expect(LMDBError.permissionDenied.reason == "permission denied")
        #expect(LMDBError.noSuchFile.reason == "no such file or directory")
        // LMDB's own messages stay as LMDB writes them.
        #expect(LMDBError.invalid.reason == "MDB_INVALID: File is not an LMDB file")
    }

    @Test func theExpectMacroMatchesNamedErrors() throws {
        try withEnvironment { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
            _ = try environment.write { tx throws in try tx.put([1], forKey: key(2), in: db, options: .append) }
            #expect(throws: LMDBError.keyExists) {
                try environment.write { tx throws in try tx.put([1], forKey: key(1), in: db, options: .append) }
            }
        }
    }
}
