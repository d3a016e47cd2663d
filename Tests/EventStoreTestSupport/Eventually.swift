public import Foundation

/// Polls `condition` every few milliseconds until it holds, for at most `timeout`; whether it
/// held. The bound is generous: the whole suite shares two cores, and a caller checks that
/// something happens, not how fast (speed is measured in the benchmarks).
public func eventually(timeout: TimeInterval = 60, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        if Date() > deadline { return false }
        try await Task.sleep(for: .milliseconds(2))
    }
    return true
}
