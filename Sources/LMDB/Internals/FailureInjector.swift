import Synchronization

/// Forces chosen LMDB calls to fail, so tests can exercise the error paths (debug builds only).
///
/// Each environment has its own injector, so tests that run in parallel do not interfere. The
/// wrappers in `LMDBCalls.swift` ask it before every call that returns an error code; in release
/// builds ``forcedCode(for:)`` is `nil` and the check compiles away.
final class FailureInjector: Sendable {
    private struct Rule {
        var code: Int32
        var remaining: Int
        var skipped: Int
    }

    private let rules = Mutex<[LMDBFunction: Rule]>([:])
    /// How many functions have a rule: calls of an environment without any skip the lock.
    private let armed = Atomic<Int>(0)

    /// Lets `after` calls of `function` through, then makes the next `times` fail with `code`
    /// (`times` of 0 removes the rule).
    func force(_ function: LMDBFunction, code: Int32, times: Int, after: Int = 0) {
        precondition(code != 0, "a forced failure needs a non-zero code")
        precondition(times >= 0 && after >= 0, "times and after must not be negative")
        rules.withLock { rules in
            rules[function] = times > 0 ? Rule(code: code, remaining: times, skipped: after) : nil
            armed.store(rules.count, ordering: .releasing)
        }
    }

    /// Runs right before the environment's handle closes (debug builds).
    private let closeHook = Mutex<(@Sendable () -> Void)?>(nil)

    /// Makes `body` run right before the environment's handle closes.
    func runBeforeClose(_ body: @escaping @Sendable () -> Void) {
        closeHook.withLock { $0 = body }
    }

    /// Called by the environment's `deinit` right before it closes the handle.
    func willClose() {
        #if ENABLE_MOCKING
            closeHook.withLock { $0 }?()
        #endif
    }

    /// Whether a forced failure is still to come.
    var isArmed: Bool { armed.load(ordering: .acquiring) > 0 }

    /// The code a call of `function` must return instead of calling LMDB, if any; consumes one
    /// forced failure.
    @inline(__always)
    func forcedCode(for function: LMDBFunction) -> Int32? {
        #if ENABLE_MOCKING
            guard isArmed else { return nil }
            return rules.withLock { rules -> Int32? in
                guard var rule = rules[function] else { return nil }
                if rule.skipped > 0 {
                    rule.skipped -= 1
                    rules[function] = rule
                    return nil
                }
                rule.remaining -= 1
                rules[function] = rule.remaining > 0 ? rule : nil
                armed.store(rules.count, ordering: .releasing)
                return rule.code
            }
        #else
            return nil
        #endif
    }
}
