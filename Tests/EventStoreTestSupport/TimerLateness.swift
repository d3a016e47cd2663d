/// How long `body` took, and how long the machine stalled timers meanwhile: a control task
/// sleeps 100 ms at a time and adds up its wake-ups' stalls, the part of each delay past 250 ms,
/// counted up to the end of `body`.
///
/// On a loaded machine (the parallel suite on two cores) a timer can wait tens of seconds for a
/// free thread, and several such stalls can fall within one wait; a test that bounds how long
/// something took allows for them, so it fails on what it checks rather than on the machine's
/// load. Only stalls count: the few milliseconds each wake-up is late under steady load would
/// add up, over a long wait, to as much as the wait itself, and a wait the code really sat out
/// would then pass.
///
/// ```swift
/// let (elapsed, lateness) = try await measuringTimerLateness { try await server.stop() }
/// #expect(elapsed < .seconds(20) + lateness)
/// ```
public func measuringTimerLateness(_ body: () async throws -> Void) async throws -> (
    elapsed: Duration, lateness: Duration
) {
    let control = Task {
        var sleeps: [(asleep: ContinuousClock.Instant, woke: ContinuousClock.Instant)] = []
        while !Task.isCancelled {
            let asleep = ContinuousClock.now
            try? await Task.sleep(for: .milliseconds(100))
            sleeps.append((asleep, ContinuousClock.now))
        }
        return sleeps
    }
    let started = ContinuousClock.now
    do {
        try await body()
    } catch {
        control.cancel()
        throw error
    }
    let ended = ContinuousClock.now
    control.cancel()
    var lateness = Duration.zero
    for sleep in await control.value where sleep.asleep < ended {
        let delay = min(sleep.woke, ended) - sleep.asleep - .milliseconds(100)
        lateness += max(.zero, delay - .milliseconds(250))
    }
    return (ended - started, lateness)
}
