#if canImport(SwiftUI)
    public import SwiftUI

    extension EnvironmentValues {
        /// The store that ``StoreQuery`` reads; set it once near the root of the app.
        ///
        /// ```swift
        /// WindowGroup { TasksView() }.environment(\.eventStore, store)
        /// ```
        public var eventStore: Store? {
            get { self[EventStoreKey.self] }
            set { self[EventStoreKey.self] = newValue }
        }
    }

    /// The environment key of ``SwiftUI/EnvironmentValues/eventStore``.
    private struct EventStoreKey: EnvironmentKey {
        static let defaultValue: Store? = nil
    }

    /// A live query as a view property, in the spirit of SwiftData's `@Query`: the store comes from
    /// the environment (``SwiftUI/EnvironmentValues/eventStore``), the view shows the state, and
    /// the projected value is the ``LiveQuery`` model (for ``LiveQuery/retry()``).
    ///
    /// ```swift
    /// struct OpenTasks: View {
    ///     @StoreQuery(Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(50))
    ///     private var tasks
    ///
    ///     var body: some View {
    ///         switch tasks {
    ///         case .loading: ProgressView()
    ///         case .empty: ContentUnavailableView("Nothing to do", systemImage: "checkmark")
    ///         case .loaded(let items, _): List(items, id: \.id) { Text($0["title"]?.stringValue ?? "") }
    ///         case .failed(let error): Button("Retry: \(error.message)") { $tasks.retry() }
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// A view made with another request (a parent passing a new filter) queries again; a request
    /// set through the projected value (`$tasks.request = …`, such as a raised limit) stays until
    /// then. The model, kept in the view's state, lives as long as the view.
    @propertyWrapper
    public struct StoreQuery<Request: QueryRequest>: DynamicProperty {
        @Environment(\.eventStore) private var store
        @State private var model: LiveQuery<Request>
        private let request: Request

        /// A live query for `request` on the environment's store.
        @MainActor public init(_ request: Request) {
            self.request = request
            _model = State(initialValue: LiveQuery(request, in: nil))
        }

        /// The state of the answer.
        @MainActor public var wrappedValue: LiveQuery<Request>.State { model.state }

        /// The model: ``LiveQuery/retry()``, ``LiveQuery/elements``, ``LiveQuery/request``.
        @MainActor public var projectedValue: LiveQuery<Request> { model }

        /// Hands the environment's store and the current request to the model (SwiftUI calls this
        /// before each evaluation of the view's body, on the main actor).
        public mutating func update() {
            let (model, store, request) = (self.model, self.store, self.request)
            MainActor.assumeIsolated {
                model.store = store
                // A request changed through the projected value (a raised limit) stays until the
                // view is made with another one.
                if model.viewRequest != request {
                    model.viewRequest = request
                    model.request = request
                }
            }
        }
    }
#endif
