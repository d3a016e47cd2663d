#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A reader–writer lock: transactions hold it shared, map resizes hold it exclusively.
///
/// LMDB requires that no transaction is active in the process while the map size changes; this
/// lock is how the environment guarantees it. The default (reader-preferring) policy lets a
/// thread take the shared side again while it already holds it.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() {
        lock.initialize(to: pthread_rwlock_t())
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func withShared<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let status = pthread_rwlock_rdlock(lock)
        // EDEADLK: this thread holds the lock exclusively. Going on would release that lock.
        precondition(status == 0, "pthread_rwlock_rdlock failed with \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withExclusive<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let status = pthread_rwlock_wrlock(lock)
        precondition(status == 0, "pthread_rwlock_wrlock failed with \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
