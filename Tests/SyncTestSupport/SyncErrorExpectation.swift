public import EventSync
public import Testing

/// Expects `body` to throw a ``SyncError`` with `code`.
public func expectSyncError<R>(
    _ code: SyncError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
) async {
    do {
        _ = try await body()
        Issue.record("expected a \(code) error, got success", sourceLocation: sourceLocation)
    } catch let error as SyncError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a \(code) error, got \(error)", sourceLocation: sourceLocation)
    }
}
