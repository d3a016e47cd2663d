import Synchronization

/// Forces chosen LMDB calls to fail, so tests can exercise the error paths (debug builds only).
///
/// Each environment has its own injector, so tests that run in parallel do not interfere.
final class FailureInjector: Sendable {
    private struct Rule {
        var code: Int32
        var remaining: Int
    }

    private let rules = Mutex<[String: Rule]>([:])

    /// Makes the next `times` calls of `function` fail with `code`.
    func force(_ function: String, code: Int32, times: Int) {
        rules.withLock { $0[function] = Rule(code: code, remaining: times) }
    }

    /// The code a call of `function` must fail with, if any; consumes one forced failure.
    @inline(__always)
    func forcedCode(for function: String) -> Int32? {
        #if ENABLE_MOCKING
        return rules.withLock { rules -> Int32? in
            guard var rule = rules[function], rule.remaining > 0 else { return nil }
            rule.remaining -= 1
            rules[function] = rule.remaining > 0 ? rule : nil
            return rule.code
        }
        #else
        return nil
        #endif
    }
}
