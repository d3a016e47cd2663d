import LMDB

extension Store {
    /// Checks the log's invariants and compares every projection with a rebuild from the log:
    /// byte for byte, except the search index (and each item's doc id in it), which is compared
    /// by what it holds.
    ///
    /// Log: seqs are dense from 1, every event decodes, every event id maps to its seq.
    /// Projections: rebuilt into a scratch environment and compared entry by entry with the
    /// live ones; the search index per item (its document's length) and per term (its live
    /// postings by item, frequency and length), since segments depend on how commits were grouped.
    /// Everything is read from one snapshot, so it runs alongside writers without
    /// false reports (the snapshot's pages stay allocated until it finishes). A log that fails
    /// its checks is not replayed: the report names its problems instead.
    ///
    /// ```swift
    /// let report = try store.verify()
    /// for problem in report.problems { print(problem) }
    /// ```
    public func verify(progress: (@Sendable (Progress) -> Void)? = nil) throws -> VerificationReport {
        var report = VerificationReport()
        try read { reader in
            report.skippedProjections = try reader.unregisteredProjections()
            let head = try reader.head()
            try checkLog(reader, into: &report)
            guard report.isConsistent else {
                report.record(
                    .init(
                        kind: "not-compared", database: "*", key: "*",
                        detail: "projections were not compared: the log failed its checks"))
                return
            }
            let scratch = try ScratchProjections(configuration: configuration)
            try scratch.build(from: self, snapshot: reader, through: head, progress: progress)
            let live = try reader.projection
            try scratch.environment.read { rebuilt in
                // Version keys of projections this process did not register (a server's, say) are
                // not ours to judge.
                let registered = Set(configuration.projections.map { ProjectionWriter.versionKey($0.name) })
                // The search index's directory describes segments, which depend on how commits
                // were grouped: the index is compared by meaning instead (SearchIndexAudit).
                // Nor does the dead-document bitmap, which names doc ids. The declared indexes'
                // runs likewise depend on the commits (IndexAudit).
                let ignore: (UnsafeRawBufferPointer) -> Bool = { key in
                    (key.starts(with: Array("projection-version.".utf8)) && !registered.contains(Array(key)))
                        || key.elementsEqual(SegmentDirectory.key) || key.starts(with: DeadDocuments.keyPrefix)
                        || key.elementsEqual(IndexRunDirectory.key)
                }
                for ((name, liveDB), (_, rebuiltDB)) in zip(live.all, scratch.databases.all)
                where !SearchIndexAudit.databaseNames.contains(name) && name != IndexAudit.databaseName {
                    try compare(
                        name: name, live: reader.tx, liveDB, rebuilt: rebuilt, rebuiltDB,
                        ignoring: name == "state" ? ignore : { _ in false },
                        comparing: name == "items" ? ItemRecord.comparableBytes : { $1 }, into: &report)
                }
                try SearchIndexAudit(live: (reader.tx, live), rebuilt: (rebuilt, scratch.databases)).compare(
                    into: &report)
                try IndexAudit(live: (reader.tx, live), rebuilt: (rebuilt, scratch.databases)).compare(into: &report)
            }
        }
        return report
    }

    private func checkLog(_ reader: StoreReader, into report: inout VerificationReport) throws {
        var expected: UInt64 = 1
        let replica = try Meta.replicaID(reader.tx, schema.meta)
        let originSequence = try Meta.uint64(reader.tx, schema.meta, Meta.originSequence) ?? 0
        if try Meta.rebuildIsNeeded(reader.tx, schema.meta) {
            report.record(
                .init(
                    kind: "rebuild-pending", database: "meta", key: Meta.rebuildNeeded,
                    detail:
                        "the projections must be rebuilt (after a restamp, a configuration change or a format upgrade) and were not yet: opening the store for writing does it"
                ))
        }
        try reader.tx.forEach(in: schema.events) { key, value in
            guard let seq = try? Keys.seq(from: key) else {
                report.record(.init(kind: "bad-key", database: "events", key: hex(key), detail: "key is not 8 bytes"))
                return true
            }
            if seq != expected {
                report.record(
                    .init(kind: "log-gap", database: "events", key: "\(seq)", detail: "expected seq \(expected)"))
            }
            expected = seq + 1
            report.eventsChecked += 1
            do {
                let event = try Event(decoding: value, seq: seq)
                if event.id.origin == replica && event.id.sequence > originSequence {
                    report.record(
                        .init(
                            kind: "origin-sequence-behind", database: "meta", key: "\(event.id)",
                            detail:
                                "the store's next id under its replica id would be \(originSequence + 1): it would reuse an id"
                        ))
                }
                let mapped = try reader.seq(of: event.id)
                if mapped != seq {
                    report.record(
                        .init(
                            kind: "event-id-mismatch", database: "event_ids", key: "\(event.id)",
                            detail: "maps to \(mapped.map(String.init) ?? "nothing"), event is at \(seq)"))
                }
            } catch {
                report.record(.init(kind: "undecodable-event", database: "events", key: "\(seq)", detail: "\(error)"))
            }
            return true
        }
        let ids = try reader.tx.count(of: schema.eventIDs)
        if UInt64(ids) != report.eventsChecked {
            report.record(
                .init(
                    kind: "event-id-mismatch", database: "event_ids", key: "*",
                    detail: "\(ids) ids for \(report.eventsChecked) events"))
        }
    }

    private func compare(
        name: String, live: ReadTransaction, _ liveDB: Database, rebuilt: ReadTransaction, _ rebuiltDB: Database,
        ignoring ignored: (UnsafeRawBufferPointer) -> Bool,
        comparing meaning: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer,
        into report: inout VerificationReport
    ) throws {
        try live.withCursor(on: liveDB) { liveCursor in
            try rebuilt.withCursor(on: rebuiltDB) { rebuiltCursor in
                var left = try liveCursor.first()
                var right = try rebuiltCursor.first()
                while left != nil || right != nil {
                    if let entry = left, ignored(entry.key) {
                        left = try liveCursor.next()
                        continue
                    }
                    if let entry = right, ignored(entry.key) {
                        right = try rebuiltCursor.next()
                        continue
                    }
                    report.entriesCompared += 1
                    let order: Int
                    if let left, let right {
                        order = compareBytes(left.key, right.key)
                    } else {
                        order = left == nil ? 1 : -1
                    }
                    if order < 0, let entry = left {
                        report.record(
                            .init(
                                kind: "unexpected", database: name, key: readableKey(name, entry.key),
                                detail: "not in a rebuild from the log"))
                        left = try liveCursor.next()
                    } else if order > 0, let entry = right {
                        report.record(
                            .init(
                                kind: "missing", database: name, key: readableKey(name, entry.key),
                                detail: "a rebuild from the log has it"))
                        right = try rebuiltCursor.next()
                    } else if let l = left, let r = right {
                        if !meaning(l.key, l.value).elementsEqual(meaning(r.key, r.value)) {
                            report.record(
                                .init(
                                    kind: "different", database: name, key: readableKey(name, l.key),
                                    detail: "value differs from a rebuild"))
                        }
                        left = try liveCursor.next()
                        right = try rebuiltCursor.next()
                    }
                }
            }
        }
    }
}

func hex(_ bytes: UnsafeRawBufferPointer) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}

/// A key as people read it: `collection/item[…]` for keys that start with an item key.
func readableKey(_ database: String, _ key: UnsafeRawBufferPointer) -> String {
    switch database {
    case "items" where !Keys.isItemHistory(key):
        if let (collection, item) = try? Keys.splitItem(key) { return "\(collection)/\(item)" }
    case "items", "conflicts":
        if let first = key.firstIndex(of: 0), let second = key[(first + 1)...].firstIndex(of: 0),
            let (collection, item) = try? Keys.splitItem(UnsafeRawBufferPointer(rebasing: key[..<second]))
        {
            let rest = UnsafeRawBufferPointer(rebasing: key[(second + 1)...])
            let seq =
                rest.count >= 8
                ? (try? Keys.seq(from: UnsafeRawBufferPointer(rebasing: rest[rest.startIndex..<rest.startIndex + 8])))
                : nil
            return "\(collection)/\(item)@\(seq.map(String.init) ?? hex(rest))"
        }
    default:
        if let text = String(validating: key, as: UTF8.self),
            !text.contains(where: { $0.asciiValue.map { $0 < 0x20 } ?? false })
        {
            return text
        }
    }
    return hex(key)
}
