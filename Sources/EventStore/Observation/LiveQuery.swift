public import Observation

/// An observable live query for a view to bind to: the answer to a ``Query`` or a
/// ``TypedQuery``, kept current as commits change it, with the loading, loaded, empty and failed
/// states a list screen shows (see <doc:SwiftUI>).
///
/// ```swift
/// @MainActor @Observable final class TasksScreen {
///     let open: LiveQuery<TypedQuery<Task>>
///     init(store: Store) {
///         let tasks = store.collection(Task.self)
///         open = LiveQuery(tasks.query().where(\.done, .equals(false)).sorted(by: \.due).limit(50), in: store)
///     }
/// }
///
/// switch screen.open.state {
/// case .loading: ProgressView()
/// case .empty: Text("Nothing to do")
/// case .loaded(let tasks, _): List(tasks) { Text($0.title) }
/// case .failed(let error): Text(error.message); Button("Retry") { screen.open.retry() }
/// }
/// ```
///
/// The model starts observing when it is made. It reads on a background task (a query never
/// runs on the main actor) and changes ``state`` only when the answer changed
/// (``Store/observe(_:)``). Setting ``request`` (another filter, sort or limit) or ``store``
/// queries again; until the new answer arrives the previous one stays in ``state``, so a
/// list does not flash empty while a filter is typed. A failure (an index the query needs is not
/// declared, an item that does not decode) is shown as ``State/failed(_:)`` and kept until
/// ``retry()``. When the store closes, the last answer stays. Releasing the model stops the
/// observation.
///
/// One model observes one page: the request's ``Query/limit`` rows (all rows without a limit).
/// To show more rows, raise the limit (`request = request.limit(100)`); the first rows keep their
/// identity, so a list updates in place.
@MainActor @Observable
public final class LiveQuery<Request: QueryRequest> {
    /// What the model holds.
    public enum State: Sendable {
        /// The first answer has not arrived yet.
        case loading
        /// The answer: its elements in the query's order, and the cursor after them (`nil`
        /// when they are every matching row).
        case loaded([Request.Element], next: String?)
        /// No row matches.
        case empty
        /// The query failed; ``LiveQuery/retry()`` runs it again.
        case failed(EventStoreError)
    }

    /// The current state; changes only when the answer changes.
    public private(set) var state: State = .loading

    /// The request; setting another one queries again.
    public var request: Request {
        didSet { if request != oldValue { restart() } }
    }

    /// The store queried (`nil`: the model fails with a message saying so); setting another one
    /// queries again.
    public var store: Store? {
        didSet { if store !== oldValue { restart() } }
    }

    @ObservationIgnored private let task = ObservationTask()
    @ObservationIgnored private var generation: UInt64 = 0
    /// The request the ``StoreQuery`` wrapper last handed over.
    @ObservationIgnored var viewRequest: Request?

    /// Creates the model and starts observing.
    ///
    /// - Parameters:
    ///   - request: A ``Query`` or a ``TypedQuery``.
    ///   - store: The store to query; `nil` until one is set (as the SwiftUI wrapper does from
    ///     the environment).
    public init(_ request: Request, in store: Store?) {
        self.request = request
        self.store = store
        restart()
    }

    /// The elements of the answer; empty unless ``state`` is ``State/loaded(_:next:)``.
    public var elements: [Request.Element] {
        if case .loaded(let elements, _) = state { return elements }
        return []
    }

    /// Whether the first answer is still to come.
    public var isLoading: Bool {
        if case .loading = state { return true }
        return false
    }

    /// The error of a failed query.
    public var error: EventStoreError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// Runs the query again from the start (after a failure, or to force a fresh read).
    public func retry() {
        restart()
    }

    private func restart() {
        generation &+= 1
        let generation = self.generation
        if case .failed = state { state = .loading }
        guard let store else {
            task.replace(with: nil)
            state = .failed(EventStoreError(.closed, "no store to query: set the live query's store"))
            return
        }
        let request = self.request
        task.replace(
            with: Task.detached(priority: .userInitiated) { [weak self] in
                do {
                    for try await page in store.observe(try request.resolvedQuery()) {
                        let elements = try request.elements(of: page, in: store)
                        guard let model = self else { return }
                        await model.show(elements, next: page.next, generation: generation)
                    }
                } catch {
                    guard !Task.isCancelled, let model = self else { return }
                    await model.fail(error, generation: generation)
                }
            })
    }

    private func show(_ elements: [Request.Element], next: String?, generation: UInt64) {
        guard generation == self.generation else { return }
        state = elements.isEmpty && next == nil ? .empty : .loaded(elements, next: next)
    }

    private func fail(_ error: any Error, generation: UInt64) {
        guard generation == self.generation else { return }
        state = .failed(
            error as? EventStoreError ?? EventStoreError(.storage, "the live query failed: \(error)", cause: error))
    }
}
