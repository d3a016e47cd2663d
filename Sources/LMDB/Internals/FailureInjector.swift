import Synchronization

/// Forces chosen LMDB calls to fail, so tests can exercise the error paths (debug builds only).
///
/// Each environment has its own injector, so tests that run in parallel do not interfere.
final class FailureInjector: Sendable {
    private struct Rule {
        var code: Int32
        var remaining: Int
        var skipped: Int
    }

    private let rules = Mutex<[String: Rule]>([:])

    /// Lets `after` calls of `function` through, then makes the next `times` fail with `code`.
    func force(_ function: String, code: Int32, times: Int, after: Int = 0) {
        rules.withLock { $0[function] = Rule(code: code, remaining: times, skipped: after) }
    }

    /// The code a call of `function` must fail with, if any; consumes one forced failure.
    @inline(__always)
    func forcedCode(for function: String) -> Int32? {
        #if ENABLE_MOCKING
            return rules.withLock { rules -> Int32? in
                guard var rule = rules[function], rule.remaining > 0 else { return nil }
                if rule.skipped > 0 {
                    rule.skipped -= 1
                    rules[function] = rule
                    return nil
                }
                rule.remaining -= 1
                rules[function] = rule.remaining > 0 ? rule : nil
                return rule.code
            }
        #else
            return nil
        #endif
    }
}
