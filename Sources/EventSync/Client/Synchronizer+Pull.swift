import EventStore

/// Pulling: the server's log in pages, ingested with the cursor that covers them.
extension Synchronizer {
    private struct IngestedPage: Sendable {
        var cursor: SyncCursor
        var appended: [Event]
        var duplicates: Int
    }

    /// A fetched and checked page: its events validated and encoded once, ready to ingest.
    private struct CheckedPage: Sendable {
        var page: PullPage
        var events: [CheckedEvent]
        var bytes: Int
    }

    /// What the fetching task hands the ingesting loop, in log order.
    private enum Fetched: Sendable {
        /// A page that passed its checks (checksum, order, bounds), and its events checked for
        /// ingestion, or the error that checking them raised.
        case page(PullPage, Result<CheckedPage, any Error>)
        /// A page that failed its checks.
        case invalid(PullPage, any Error)
        /// The transport failed.
        case failed(any Error)
    }

    func pullAll(_ cursor: inout SyncCursor, info: RemoteInfo?, report: inout SyncReport) async throws
        -> PhaseOutcome
    {
        let pageSize = max(1, min(configuration.pullPageSize, info?.limits.maxPageEvents ?? .max))
        let budget = max(1, configuration.pullBytesPerCommit)
        // How far ahead of this device's clock a pulled stamp may be (see maxPulledClockSkew).
        let pulledSkew = max(
            UInt64(max(0, configuration.maxPulledClockSkew.inSeconds * 1000)),
            store.configuration.maxClockSkewMilliseconds)
        // Pages are fetched, decoded and checked ahead of the commits, by a task of their own, into
        // a queue of at most one budget (plus a page): the writer ingests one commit while the
        // next one is made ready.
        let queue = PageQueue<Fetched>(limit: budget)
        let fetcher = Task { [start = cursor.pulled, check = cursor.check] in
            await fetchPages(after: start, pageSize: pageSize, check: check, into: queue)
        }
        defer {
            queue.close()
            fetcher.cancel()
        }
        // A page fetched for a commit it did not fit in (it opens the next one), or the error
        // that checking it raised (thrown once the pages before it are committed).
        var carried: Result<CheckedPage, any Error>?
        // The conflicts of the last commit, read while the next one is ingested.
        var lastConflicts: Task<ConflictTally, any Error>?
        defer { lastConflicts?.cancel() }
        while true {
            // Pages while their encoded events fit in the budget; at least one page (a single
            // page when the log is caught up).
            let after = cursor.pulled
            var pages: [CheckedPage] = []
            var bytes = 0
            gathering: while true {
                let checked: CheckedPage
                if let page = carried {
                    carried = nil
                    do { checked = try page.get() } catch { throw refused(error, after: after) }
                } else {
                    try Task.checkCancellation()
                    guard let fetched = await queue.take() else { throw CancellationError() }
                    let page: PullPage
                    let outcome: Result<CheckedPage, any Error>
                    switch fetched {
                    case .failed(let error): throw error
                    case .invalid(let invalid, let error): (page, outcome) = (invalid, .failure(error))
                    case .page(let fetched, let result): (page, outcome) = (fetched, result)
                    }
                    report.requests += 1
                    if let epoch = cursor.epoch, page.epoch != epoch {
                        // Pages of the old epoch are dropped with it.
                        try await settle(&lastConflicts, into: &report)
                        cursor = try await adopt(epoch: page.epoch, report: &report)
                        return .epochChanged
                    }
                    if case .invalid(_, let error) = fetched { throw error }
                    switch outcome {
                    case .success(let page):
                        checked = page
                    case .failure where !pages.isEmpty:
                        carried = outcome
                        break gathering
                    case .failure(let error):
                        throw refused(error, after: after)
                    }
                }
                if let first = pages.first, checked.page.epoch != first.page.epoch {
                    throw SyncError(.protocolViolation, "pages after \(after) come from two epochs")
                }
                guard pages.isEmpty || bytes + checked.bytes <= budget else {
                    carried = .success(checked)
                    break
                }
                pages.append(checked)
                bytes += checked.bytes
                guard checked.page.next < checked.page.head, bytes < budget else { break }
            }

            let last = pages[pages.count - 1].page
            let key = cursorKey
            let events = pages.flatMap(\.events)
            let ingested: IngestedPage
            do {
                ingested = try await store.write { writer in
                    var cursor = try SyncCursor.load(writer, key: key)
                    guard cursor.pulled == after, cursor.epoch == last.epoch else {
                        throw SyncError(
                            .local, "the sync cursor moved during a pull (two synchronizers for one remote?)")
                    }
                    let headBefore = try writer.head()
                    // The server took these stamps against its clock: a clock here that is
                    // behind must not refuse what others wrote (within a wider bound).
                    let result = try writer.ingestAll(checked: events, maxSkewMilliseconds: pulledSkew)
                    // Nothing local is pending: what was just pulled need not be pushed back.
                    if cursor.pushed == headBefore { cursor.pushed = try writer.head() }
                    cursor.pulled = last.next
                    cursor.raiseMark(last.next, last.digest, last.signature)
                    try cursor.save(writer, key: key)
                    return IngestedPage(cursor: cursor, appended: result.appended, duplicates: result.duplicates.count)
                }
            } catch let error as EventStoreError {
                throw refused(error, after: after)
            }
            cursor = ingested.cursor
            report.pulled += ingested.appended.count
            report.pulledDuplicates += ingested.duplicates
            report.serverHead = max(report.serverHead, last.head)
            try await settle(&lastConflicts, into: &report)
            if !ingested.appended.isEmpty {
                let (appended, limit) = (ingested.appended, configuration.maxReportedConflicts)
                lastConflicts = Task { try self.conflicts(of: appended, limit: limit) }
            }
            if last.next >= last.head && carried == nil {
                try await settle(&lastConflicts, into: &report)
                return .done
            }
        }
    }

    /// The fetching side of ``pullAll(_:info:report:)``: fetches the pages after `start` one
    /// after another, verifies each and checks its events, and queues them, until the server's
    /// head, a failure (queued too), or the queue's closing.
    private func fetchPages(after start: UInt64, pageSize: Int, check: ContinuityCheck?, into queue: PageQueue<Fetched>)
        async
    {
        let transport = self.transport
        var next = start
        while !Task.isCancelled {
            let page: PullPage
            do {
                page = try await transport.pull(after: next, limit: pageSize, check: check)
            } catch {
                _ = await queue.put(.failed(error), bytes: 0)
                return
            }
            do {
                try Synchronizer.verify(page, after: next)
            } catch {
                _ = await queue.put(.invalid(page, error), bytes: 0)
                return
            }
            let outcome = Result { try self.check(page) }
            next = page.next
            publish(.pulling(SyncProgress(completed: Int(next - start), total: Int(page.head - min(start, page.head)))))
            let bytes = (try? outcome.get().bytes) ?? 0
            guard await queue.put(.page(page, outcome), bytes: bytes), case .success = outcome, next < page.head else {
                return
            }
        }
    }

    /// Checks a page's events for ingestion (names, fields, sizes), encoding each once.
    private func check(_ page: PullPage) throws -> CheckedPage {
        let events = try store.check(page.events)
        return CheckedPage(page: page, events: events, bytes: events.reduce(0) { $0 + $1.byteCount })
    }

    /// The error for pulled events the store refused, in a commit after `after`.
    private func refused(_ error: any Error, after: UInt64) -> SyncError {
        Synchronizer.syncError(error).prefixed("cannot ingest pulled events after \(after): ")
    }

    /// Checks a page: checksum, order, bounds.
    static func verify(_ page: PullPage, after: UInt64) throws {
        // Over the bytes as received when they were the events' canonical JSON, over the events
        // encoded again otherwise.
        let checksum = page.receivedChecksum ?? PageChecksum(events: page.events)
        guard checksum == page.checksum else {
            throw SyncError(
                .protocolViolation,
                "page after \(after): checksum \(checksum) does not match the server's \(page.checksum)")
        }
        var previous = after
        for event in page.events {
            guard event.seq > previous else {
                throw SyncError(.protocolViolation, "page after \(after): seq \(event.seq) out of order")
            }
            previous = event.seq
        }
        guard page.next == previous, page.next <= page.head else {
            throw SyncError(
                .protocolViolation,
                "page after \(after): next \(page.next) does not match its events or head \(page.head)")
        }
        if page.events.isEmpty && page.head > after {
            throw SyncError(.protocolViolation, "page after \(after) is empty but the head is \(page.head)")
        }
    }

    /// The conflicts that the commit of `appended` recorded: how many, and the first `limit`.
    private struct ConflictTally: Sendable {
        var count = 0
        var records: [ConflictRecord] = []

        /// Adds the tally to `report`, which keeps at most `limit` records.
        func add(to report: inout SyncReport, limit: Int) {
            report.conflicts += count
            report.conflictRecords += records.prefix(max(0, limit - report.conflictRecords.count))
        }
    }

    /// Waits for the last commit's conflicts, if they are being read, and adds them to `report`.
    private func settle(_ pending: inout Task<ConflictTally, any Error>?, into report: inout SyncReport) async throws {
        guard let task = pending else { return }
        pending = nil
        try await task.value.add(to: &report, limit: configuration.maxReportedConflicts)
    }

    /// Reads the conflicts recorded for the events of `appended` (committed), on a snapshot of its
    /// own: it runs while the next commit is ingested.
    private func conflicts(of appended: [Event], limit: Int) throws -> ConflictTally {
        var seqsByItem: [String: (collection: String, item: String, seqs: Set<UInt64>)] = [:]
        for event in appended {
            seqsByItem[event.collection + "\u{0}" + event.item, default: (event.collection, event.item, [])].seqs
                .insert(event.seq)
        }
        var tally = ConflictTally()
        try store.read { reader in
            for entry in seqsByItem.values {
                for record in try reader.conflicts(collection: entry.collection, item: entry.item)
                where entry.seqs.contains(record.seq) {
                    tally.count += 1
                    if tally.records.count < limit { tally.records.append(record) }
                }
            }
        }
        return tally
    }

    /// Wraps any error as a ``SyncError``.
    static func syncError(_ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        if let error = error as? EventStoreError {
            return SyncError(refusedEvent: error) ?? SyncError(.local, error.message, cause: error)
        }
        if error is CancellationError { return SyncError(.transport, "the sync was cancelled", cause: error) }
        return SyncError(.transport, "\(error)", cause: error)
    }
}
