#if ENABLE_MOCKING
    import Foundation
    import LMDB
    import Synchronization
    import Testing

    /// Opening a path while its last instance is being torn down (debug builds, which can hold a
    /// close open).
    struct EnvironmentTeardownTests {
        /// The registry's weak reference reads `nil` before `deinit` closes the handle. An open in
        /// that moment waits for the close: two handles on one lock file in one process would
        /// release each other's locks.
        @Test func anOpenWaitsUntilTheLastInstanceOfThePathHasClosed() throws {
            let directory = TestDirectory()
            defer { directory.remove() }
            let tearingDown = DispatchSemaphore(value: 0)
            let closeHeldOpen = Flag()
            let path = directory.path
            let thread = Thread {
                do {
                    let environment = try Environment.open(path: path)
                    let db = try environment.write { try $0.openDatabase(named: "db", options: .create) }
                    _ = try environment.write { try $0.put(bytes("kept"), forKey: bytes("k"), in: db) }
                    environment._beforeClose {
                        closeHeldOpen.value.store(true, ordering: .releasing)
                        tearingDown.signal()
                        Thread.sleep(forTimeInterval: 0.5)
                        closeHeldOpen.value.store(false, ordering: .releasing)
                    }
                } catch {
                    Issue.record(error)
                    tearingDown.signal()
                }
                // The instance's last reference went: its deinit runs on this thread.
            }
            thread.start()
            #expect(tearingDown.wait(timeout: .now() + 30) == .success)
            #expect(closeHeldOpen.isSet, "the instance's teardown had begun")

            let reopened = try Environment.open(path: path)
            #expect(!closeHeldOpen.isSet, "the open returned before the old handle closed")
            let value = try reopened.read { tx throws in
                try tx.value(forKey: bytes("k"), in: try tx.openDatabase(named: "db"))
            }
            #expect(value == bytes("kept"))
            #expect(try Environment.open(path: path) === reopened)
        }

        /// A flag the teardown sets and clears from another thread.
        private final class Flag: Sendable {
            let value = Atomic<Bool>(false)
            var isSet: Bool { value.load(ordering: .acquiring) }
        }
    }
#endif
