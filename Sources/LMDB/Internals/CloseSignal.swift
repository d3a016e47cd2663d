#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells when an environment's LMDB handle has been closed.
///
/// An instance's weak references read `nil` as soon as its last strong reference goes, before
/// its `deinit` has closed the handle. An open of the same path in that moment must wait for the
/// close: two handles on one lock file in one process would release each other's locks (LMDB
/// forbids opening an environment twice in a process). The registry keeps this signal beside
/// the weak reference, and the instance fires it once `mdb_env_close` has returned.
final class CloseSignal: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`.
    private var closed = false

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Whether the handle has been closed.
    var isClosed: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return closed
    }

    /// Records that the handle has been closed and wakes every waiter.
    func fire() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Returns once the handle has been closed.
    func wait() {
        pthread_mutex_lock(mutex)
        while !closed { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
