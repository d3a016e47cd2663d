import Dispatch
import LMDB
import Logging
import Synchronization

/// Computes the search index's next merge step on a thread of its own, between commits, so
/// that the writer only writes it (as Lucene and Tantivy merge segments in the background).
///
/// After each commit (``committed()``) it reads the committed directory in a short read
/// transaction and, when a merge is under way, computes its next step (``MergeStep``) from that
/// snapshot, sized by the work the commits earn (``expect(_:)``). A later commit whose budget
/// is due takes the step (``decide(for:databases:)``) only if the merge is still exactly in the
/// state the step was computed from (its token, inputs, progress and generation): nothing else
/// changes a merge's inputs, so the step's entries are the ones the writer would compute. When
/// no step is ready, the merge waits and the commit keeps its budget (``SegmentMerger``); after
/// ``patience`` commits in a row without one, a commit computes the step itself.
///
/// Nothing is written here and nothing of it outlives the process: a crash loses at most a step
/// computed and not applied. The writer never waits for this thread.
final class MergeAhead: Sendable {
    private struct State {
        /// The last step computed; replaced when the merge moved on.
        var ready: MergeStep?
        /// Whether a look at the committed state is queued or running.
        var scheduled = false
        /// Whether a commit came while it ran: look again after it.
        var again = false
        var stopped = false
        /// The work the last commit that changed the index earned: a step does about that much
        /// more than the directory's unspent credit.
        var expected = 0
        /// Commits in a row that wanted a step and found none ready.
        var missed = 0
        /// Steps computed and steps taken by the writer, for tests and statistics.
        var computed = 0
        var taken = 0
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "eventstore.merges", qos: .utility)
    private let environment: Environment
    private let schema: Schema
    private let logger: Logger

    init(environment: Environment, schema: Schema, logger: Logger) {
        self.environment = environment
        self.schema = schema
        self.logger = logger
    }

    /// Commits in a row that may find no step ready before the writer computes one itself: this
    /// thread may be starved or failing, and a merge that waits blocks every later merge.
    static let patience = 16

    /// What a commit that owes merge work does about the merge under way.
    enum Decision {
        /// Apply this step, computed ahead.
        case apply(MergeStep)
        /// Keep the budget: the step is being computed.
        case wait
        /// Compute the step now: none came for ``patience`` commits.
        case compute
    }

    /// The step computed for `merge` of `databases` when it is the one ready; else whether to
    /// wait for it.
    func decide(for merge: SegmentDirectory.Merge, databases: ProjectionDatabases) -> Decision {
        state.withLock { state in
            if let ready = state.ready, ready.applies(to: merge, in: databases) {
                state.taken += 1
                state.missed = 0
                return .apply(ready)
            }
            state.missed += 1
            guard state.missed > MergeAhead.patience else { return .wait }
            // The writer takes this step; the next ones are awaited again.
            state.missed = 0
            return .compute
        }
    }

    /// The step computed for `merge` of `databases`, when it is the one ready (tests).
    func readyStep(for merge: SegmentDirectory.Merge, databases: ProjectionDatabases) -> MergeStep? {
        state.withLock { state in state.ready.flatMap { $0.applies(to: merge, in: databases) ? $0 : nil } }
    }

    /// Records the work a commit earned, which sizes the next step.
    func expect(_ work: Int) {
        state.withLock { $0.expected = work }
    }

    /// Steps computed and steps the writer took (a retried transaction takes one twice).
    var counts: (computed: Int, taken: Int) {
        state.withLock { ($0.computed, $0.taken) }
    }

    /// Looks at the committed state soon, on this helper's thread.
    func committed() {
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if state.scheduled {
                state.again = true
                return false
            }
            state.scheduled = true
            return true
        }
        if start { queue.async { self.lookUntilCurrent() } }
    }

    /// Waits until the helper has looked at every commit so far (tests and benchmarks).
    func settle() {
        queue.sync {}
    }

    /// Stops looking and waits for the look under way. Later commits compute their steps.
    func stop() {
        cancel()
        queue.sync {}
    }

    /// Stops looking, without waiting for the look under way (which then changes nothing).
    func cancel() {
        state.withLock {
            $0.stopped = true
            $0.ready = nil
        }
    }

    private func lookUntilCurrent() {
        while true {
            look()
            let again = state.withLock { state -> Bool in
                if state.again && !state.stopped {
                    state.again = false
                    return true
                }
                state.scheduled = false
                return false
            }
            guard again else { return }
        }
    }

    /// Computes the next step of the committed merge, unless it is ready already.
    private func look() {
        guard !state.withLock({ $0.stopped }) else { return }
        do {
            try environment.read { tx in
                let databases = schema.generations[try StoreReader.activeGeneration(tx, schema)]
                let directory = try SegmentDirectory.load(tx: tx, state: databases.state)
                guard let merge = directory.merge, merge.token != 0 else { return }
                let (ready, expected) = state.withLock { ($0.ready, $0.expected) }
                if let ready, ready.applies(to: merge, in: databases) { return }
                let budget = max(
                    Int(SearchIndexChanges.mergeThreshold), Int(clamping: directory.credit) &+ expected)
                let step = try MergeStep(merge, budget: budget, tx: tx, databases: databases)
                state.withLock { state in
                    guard !state.stopped else { return }
                    state.ready = step
                    state.computed += 1
                }
            }
        } catch {
            // The commits compute the merge's steps themselves after ``patience`` misses.
            logger.warning(
                "a search merge step could not be computed ahead; commits will compute it",
                metadata: ["error": "\(error)"])
        }
    }
}
