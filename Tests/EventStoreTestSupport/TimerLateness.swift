/// How long `body` took, and how late the machine ran timers meanwhile: a control task sleeps
/// 100 ms at a time and adds up the delays of its wake-ups.
///
/// On a loaded machine (the parallel suite on two cores) a timer can wait tens of seconds for a
/// free thread, and many such stalls can add up within one wait; a test that bounds how long
/// something took allows for all that lateness, so it fails on what it checks rather than on the
/// machine's load. A wait the code really sat out is not lateness: the control task's timers run
/// on time through it:
///
/// ```swift
/// let (elapsed, lateness) = try await measuringTimerLateness { try await server.stop() }
/// #expect(elapsed < .seconds(20) + lateness)
/// ```
public func measuringTimerLateness(_ body: () async throws -> Void) async throws -> (
    elapsed: Duration, lateness: Duration
) {
    let control = Task {
        var total = Duration.zero
        while !Task.isCancelled {
            let asleep = ContinuousClock.now
            try? await Task.sleep(for: .milliseconds(100))
            total += max(.zero, ContinuousClock.now - asleep - .milliseconds(100))
        }
        return total
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
