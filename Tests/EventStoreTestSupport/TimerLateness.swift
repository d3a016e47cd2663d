/// How long `body` took, and how late the machine ran timers meanwhile: a control task sleeps
/// 100 ms at a time and keeps the worst delay of its wake-ups.
///
/// On a loaded machine (the parallel suite on two cores) a timer can wait tens of seconds for a
/// free thread; a test that bounds how long something took allows for that lateness, so it
/// fails on what it checks rather than on the machine's load:
///
/// ```swift
/// let (elapsed, lateness) = try await measuringTimerLateness { try await server.stop() }
/// #expect(elapsed < .seconds(20) + lateness)
/// ```
public func measuringTimerLateness(_ body: () async throws -> Void) async throws -> (
    elapsed: Duration, lateness: Duration
) {
    let control = Task {
        var worst = Duration.zero
        while !Task.isCancelled {
            let asleep = ContinuousClock.now
            try? await Task.sleep(for: .milliseconds(100))
            worst = max(worst, ContinuousClock.now - asleep - .milliseconds(100))
        }
        return worst
    }
    let started = ContinuousClock.now
    do {
        try await body()
    } catch {
        control.cancel()
        throw error
    }
    let elapsed = ContinuousClock.now - started
    control.cancel()
    return (elapsed, await control.value)
}
