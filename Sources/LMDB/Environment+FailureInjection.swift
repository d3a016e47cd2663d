import Synchronization

/// Forced failures of LMDB calls, for tests (see ``LMDBFunction``): each environment has its own
/// injector, and one prepared for a path becomes the injector of the environment opened there.
extension Environment {
    /// The injector for an environment about to open at `path` (`canonical` once resolved): the
    /// one a test prepared for the path (debug builds), or a new one.
    static func takeInjector(opening path: String, canonical: String) -> FailureInjector {
        #if ENABLE_MOCKING
            let prepared = pendingInjectors.withLock { pending in
                pending.removeValue(forKey: canonical) ?? pending.removeValue(forKey: path)
            }
            return prepared ?? FailureInjector()
        #else
            return FailureInjector()
        #endif
    }

    /// Keeps the injector of an open that failed for the next open of the path, while it still
    /// has failures to force (debug builds).
    static func keepInjector(_ injector: FailureInjector, opening canonical: String) {
        #if ENABLE_MOCKING
            guard injector.isArmed else { return }
            pendingInjectors.withLock { $0[canonical] = $0[canonical] ?? injector }
        #endif
    }
}

#if ENABLE_MOCKING
    /// Injectors prepared by ``Environment/_forceFailure(_:error:times:after:opening:)`` for paths
    /// not open yet, by path.
    private let pendingInjectors = Mutex<[String: FailureInjector]>([:])

    extension Environment {
        /// Lets `after` calls of `function` through, then makes the next `times` fail with `error`
        /// (debug builds only, where `ENABLE_MOCKING` is defined).
        ///
        /// The failing call does not reach LMDB: it returns `error`'s code, which the environment
        /// handles as if LMDB had returned it. Rules are per environment, so tests that run in
        /// parallel do not interfere; a second rule for the same function replaces the first.
        ///
        /// ```swift
        /// environment._forceFailure(.put, error: .mapFull)  // the write grows the map and retries
        /// environment._forceFailure(.txnCommit, error: .ioError)
        /// ```
        ///
        /// - Parameters:
        ///   - function: The LMDB function to fail.
        ///   - error: The error to fail with; its code must not be 0.
        ///   - times: How many calls fail (0 removes the rule).
        ///   - after: How many calls succeed first.
        public func _forceFailure(_ function: LMDBFunction, error: LMDBError, times: Int = 1, after: Int = 0) {
            injector.force(function, code: error.code, times: times, after: after)
        }

        /// Makes `body` run when this instance is torn down, right before its LMDB handle closes
        /// (debug builds only): the way to hold a close open while a test opens the path again.
        public func _beforeClose(_ body: @escaping @Sendable () -> Void) {
            injector.runBeforeClose(body)
        }

        /// Makes LMDB calls of the next environment opened at `path` fail, from the first call of
        /// ``open(path:configuration:)`` on (debug builds only): the way to fail
        /// ``LMDBFunction/envCreate``, ``LMDBFunction/envOpen`` and the other calls that opening
        /// makes. See ``_forceFailure(_:error:times:after:)``.
        ///
        /// ```swift
        /// Environment._forceFailure(.envOpen, error: .noSpace, opening: path)
        /// _ = try Environment.open(path: path)  // throws LMDBError.noSpace
        /// ```
        ///
        /// When the open fails while failures are still to come, they apply to the next open of
        /// the path; once an environment is open, they are its own. An environment already open
        /// at `path` is not affected: force its failures with the instance method.
        ///
        /// - Parameters:
        ///   - function: The LMDB function to fail.
        ///   - error: The error to fail with; its code must not be 0.
        ///   - times: How many calls fail.
        ///   - after: How many calls succeed first.
        ///   - path: The directory as it will be passed to ``open(path:configuration:)``.
        public static func _forceFailure(
            _ function: LMDBFunction, error: LMDBError, times: Int = 1, after: Int = 0, opening path: String
        ) {
            let key = (try? canonicalPath(path)) ?? path
            let injector = pendingInjectors.withLock { pending in
                if let prepared = pending[key] { return prepared }
                let injector = FailureInjector()
                pending[key] = injector
                return injector
            }
            injector.force(function, code: error.code, times: times, after: after)
        }
    }
#endif
