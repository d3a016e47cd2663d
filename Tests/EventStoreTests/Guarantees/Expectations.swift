import EventStore
import Testing

/// Expects `body` to throw an ``EventStoreError`` with `code`.
func expectStoreError(
    _ code: EventStoreError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown. \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch let error as EventStoreError {
        #expect(error.code == code, "\(error) \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error). \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    }
}
