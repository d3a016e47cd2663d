import LMDB

/// Compares two search indexes by what they hold, not by their bytes: segment boundaries and
/// doc ids depend on how commits were grouped, so a live index and a rebuild of it differ in
/// bytes while meaning the same.
///
/// Compared: per item, whether it has a document and the document's weighted length; per term
/// (in key order), its live postings as (item, weighted frequency, weighted length, positions). Checked
/// on the live side: every item's document is live, every live posting belongs to its item's
/// current document, and every key of `search_segments` belongs to a live segment, the merge
/// under way or a clean-up. Collection totals (in `state`) are exact, so they are compared
/// as bytes with the other databases.
struct SearchIndexAudit {
    /// The databases this audit replaces in the byte-for-byte comparison.
    static let databaseNames: Set<String> = ["search_documents", "search_segments"]

    let live: (tx: ReadTransaction, databases: ProjectionDatabases)
    let rebuilt: (tx: ReadTransaction, databases: ProjectionDatabases)

    func compare(into report: inout VerificationReport) throws {
        let liveItems = try Side(live).items()
        try compareItems(liveItems, try Side(rebuilt).items(), into: &report)
        try compareTerms(liveItems: liveItems, into: &report)
        try checkSegments(into: &report)
    }

    /// The index's meaning as lines, for tests: each indexed item with its document's length,
    /// then each term with its live postings as `item:frequency:length` and, for words, their
    /// positions (`@word.offset,…`).
    static func contents(tx: ReadTransaction, databases: ProjectionDatabases) throws -> [String] {
        var side = Side((tx, databases))
        var lines: [String] = []
        for (key, docID) in try side.items() {
            let length = try side.document(docID)?.length
            lines.append(
                "item \(String(decoding: key, as: UTF8.self)) \(length.map(String.init) ?? "missing")\(try side.dead.isDead(docID) ? " dead" : "")"
            )
        }
        let segments = try SegmentDirectory.load(tx: tx, state: databases.state).readableSegments.map(\.id)
        var walk = try TermWalk(tx: tx, database: databases.searchSegments, segments: segments)
        var documents: [UInt32: [UInt8]] = [:]
        while let (term, lists) = try walk.next() {
            let postings = try side.postings(lists, documents: &documents)
            guard !postings.isEmpty else { continue }
            let described = try postings.map { posting in
                let positions = try posting.positions.withUnsafeBytes { try PositionList.Decoder.decodeAll($0) }
                return "\(String(decoding: posting.item, as: UTF8.self)):\(posting.frequency):\(posting.length)"
                    + (positions.isEmpty
                        ? "" : "@" + positions.map { "\($0.word).\($0.offset)" }.joined(separator: ","))
            }
            lines.append("term \(String(decoding: term, as: UTF8.self)) " + described.joined(separator: " "))
        }
        return lines
    }

    private struct Side {
        let tx: ReadTransaction
        let databases: ProjectionDatabases
        var dead: DeadDocuments.Reader

        init(_ side: (tx: ReadTransaction, databases: ProjectionDatabases)) {
            tx = side.tx
            databases = side.databases
            dead = DeadDocuments.Reader(tx: side.tx, database: side.databases.state)
        }

        /// Every item that has a search document, with its doc id (``ItemRecord``), in key order.
        /// An entry that does not decode is left to the byte comparison of `items`, which names it.
        func items() throws -> [(key: [UInt8], docID: UInt32)] {
            var entries: [(key: [UInt8], docID: UInt32)] = []
            try ItemRecord.forEach(in: databases.items, tx: tx) { key, value in
                let docID = (try? ItemRecord(decoding: value).searchDocument) ?? 0
                if docID != 0 { entries.append((Array(key), docID)) }
                return true
            }
            return entries
        }

        func document(_ docID: UInt32) throws -> IndexedDocument? {
            try IndexedDocument.load(docID, tx: tx, database: databases.searchDocuments)
        }

        /// A posting as compared: its item, frequency, length and encoded positions.
        struct AuditPosting {
            var item: [UInt8]
            var frequency: UInt32
            var length: UInt32
            var docID: UInt32
            var positions: ArraySlice<UInt8>
        }

        /// A term's live postings, sorted by item key.
        mutating func postings(_ lists: [(segment: Int, list: ArraySlice<UInt8>)], documents: inout [UInt32: [UInt8]])
            throws
            -> [AuditPosting]
        {
            var result: [AuditPosting] = []
            for (_, list) in lists {
                // Positions point into the list's bytes: kept as slices of the list (no copy).
                var live: [(posting: Posting, positions: ArraySlice<UInt8>)] = []
                _ = try list.withUnsafeBytes { bytes in
                    try dead.forEachLive(in: bytes) { posting in
                        let start =
                            posting.positions.isEmpty
                            ? 0 : bytes.baseAddress!.distance(to: posting.positions.baseAddress!)
                        let first = list.startIndex + start
                        live.append((posting, list[first..<first + posting.positions.count]))
                    }
                }
                for (posting, positions) in live {
                    let item: [UInt8]
                    if let known = documents[posting.docID] {
                        item = known
                    } else {
                        item = try document(posting.docID)?.itemKey ?? []
                        documents[posting.docID] = item
                    }
                    result.append(
                        AuditPosting(
                            item: item, frequency: posting.frequency, length: posting.length, docID: posting.docID,
                            positions: positions))
                }
            }
            return result.sorted { ByteKey.compare($0.item, $1.item) < 0 }
        }
    }

    private func compareItems(
        _ liveItems: [(key: [UInt8], docID: UInt32)], _ rebuiltItems: [(key: [UInt8], docID: UInt32)],
        into report: inout VerificationReport
    ) throws {
        var left = Side(live)
        let right = Side(rebuilt)
        var l = 0
        var r = 0
        while l < liveItems.count || r < rebuiltItems.count {
            report.entriesCompared += 1
            let order: Int
            if l < liveItems.count && r < rebuiltItems.count {
                order = ByteKey.compare(liveItems[l].key, rebuiltItems[r].key)
            } else {
                order = l < liveItems.count ? -1 : 1
            }
            if order < 0 {
                report.record(
                    .init(
                        kind: "unexpected", database: "items", key: readable(liveItems[l].key),
                        detail: "indexed, but a rebuild from the log does not index it"))
                l += 1
                continue
            }
            if order > 0 {
                report.record(
                    .init(
                        kind: "missing", database: "items", key: readable(rebuiltItems[r].key),
                        detail: "a rebuild from the log indexes it"))
                r += 1
                continue
            }
            let key = readable(liveItems[l].key)
            let docID = liveItems[l].docID
            let liveDocument = try left.document(docID)
            let rebuiltDocument = try right.document(rebuiltItems[r].docID)
            if liveDocument == nil || liveDocument?.itemKey != liveItems[l].key {
                report.record(
                    .init(
                        kind: "missing", database: "search_documents", key: key,
                        detail: "document \(docID) of the item is missing or names another item"))
            } else if try left.dead.isDead(docID) {
                report.record(
                    .init(
                        kind: "dead-document", database: "state", key: key,
                        detail: "the item's current document \(docID) is marked dead"))
            } else if liveDocument?.length != rebuiltDocument?.length {
                report.record(
                    .init(
                        kind: "different", database: "search_documents", key: key,
                        detail:
                            "document length \(liveDocument?.length ?? 0), a rebuild has \(rebuiltDocument?.length ?? 0)"
                    ))
            }
            l += 1
            r += 1
        }
    }

    private func compareTerms(liveItems: [(key: [UInt8], docID: UInt32)], into report: inout VerificationReport) throws
    {
        var left = Side(live)
        var right = Side(rebuilt)
        /// Records a damaged block: a walk cannot go on past it, and the terms after it are
        /// reported missing. A rebuild repairs it.
        func undecodable(_ error: EventStoreError, report: inout VerificationReport) {
            report.record(
                .init(
                    kind: "undecodable", database: "search_segments", key: "(a block of terms)",
                    detail: error.message))
        }
        func walk(_ side: (tx: ReadTransaction, databases: ProjectionDatabases), report: inout VerificationReport)
            throws -> TermWalk?
        {
            do {
                return try TermWalk(
                    tx: side.tx, database: side.databases.searchSegments, segments: try segments(of: side).map(\.id))
            } catch let error as EventStoreError where error.code == .corrupt {
                undecodable(error, report: &report)
                return nil
            }
        }
        var leftWalk = try walk(live, report: &report)
        var rightWalk = try walk(rebuilt, report: &report)
        var leftDocuments: [UInt32: [UInt8]] = [:]
        var rightDocuments: [UInt32: [UInt8]] = [:]
        var leftItems: [[UInt8]: UInt32] = [:]
        for (key, docID) in liveItems { leftItems[key] = docID }

        func nextLive(
            _ walk: inout TermWalk?, _ side: inout Side, _ documents: inout [UInt32: [UInt8]],
            report: inout VerificationReport
        ) throws -> (term: [UInt8], postings: [Side.AuditPosting])? {
            while true {
                let next: (term: [UInt8], lists: [(segment: Int, list: ArraySlice<UInt8>)])?
                do {
                    next = try walk?.next()
                } catch let error as EventStoreError where error.code == .corrupt {
                    undecodable(error, report: &report)
                    walk = nil
                    return nil
                }
                guard let (term, lists) = next else { return nil }
                do {
                    let postings = try side.postings(lists, documents: &documents)
                    if !postings.isEmpty { return (term, postings) }
                } catch let error as EventStoreError where error.code == .corrupt {
                    report.record(
                        .init(
                            kind: "undecodable", database: "search_segments", key: readableTerm(term),
                            detail: error.message))
                }
            }
        }
        var l = try nextLive(&leftWalk, &left, &leftDocuments, report: &report)
        var r = try nextLive(&rightWalk, &right, &rightDocuments, report: &report)
        while l != nil || r != nil {
            report.entriesCompared += 1
            let order: Int
            if let l, let r {
                order = ByteKey.compare(l.term, r.term)
            } else {
                order = l != nil ? -1 : 1
            }
            if order < 0, let entry = l {
                report.record(
                    .init(
                        kind: "unexpected", database: "search_segments", key: readableTerm(entry.term),
                        detail: "\(entry.postings.count) live postings; a rebuild has none"))
                l = try nextLive(&leftWalk, &left, &leftDocuments, report: &report)
                continue
            }
            if order > 0, let entry = r {
                report.record(
                    .init(
                        kind: "missing", database: "search_segments", key: readableTerm(entry.term),
                        detail: "a rebuild has \(entry.postings.count) live postings"))
                r = try nextLive(&rightWalk, &right, &rightDocuments, report: &report)
                continue
            }
            let liveEntry = l!
            let rebuiltEntry = r!
            for posting in liveEntry.postings where leftItems[posting.item] != posting.docID {
                report.record(
                    .init(
                        kind: "stale-posting", database: "search_segments", key: readableTerm(liveEntry.term),
                        detail: "live posting of document \(posting.docID), which is not its item's current document"))
                break
            }
            let same =
                liveEntry.postings.count == rebuiltEntry.postings.count
                && zip(liveEntry.postings, rebuiltEntry.postings).allSatisfy {
                    $0.item == $1.item && $0.frequency == $1.frequency && $0.length == $1.length
                        && $0.positions == $1.positions
                }
            if !same {
                report.record(
                    .init(
                        kind: "different", database: "search_segments", key: readableTerm(liveEntry.term),
                        detail:
                            "live postings differ from a rebuild (\(liveEntry.postings.count) against \(rebuiltEntry.postings.count))"
                    ))
            }
            l = try nextLive(&leftWalk, &left, &leftDocuments, report: &report)
            r = try nextLive(&rightWalk, &right, &rightDocuments, report: &report)
        }
    }

    private func segments(of side: (tx: ReadTransaction, databases: ProjectionDatabases)) throws -> [SegmentDirectory
        .Segment]
    {
        try SegmentDirectory.load(tx: side.tx, state: side.databases.state).readableSegments
    }

    /// Every key of `search_segments` belongs to a segment the directory knows.
    private func checkSegments(into report: inout VerificationReport) throws {
        let directory = try SegmentDirectory.load(tx: live.tx, state: live.databases.state)
        var known = Set(directory.segments.map(\.id))
        if let merge = directory.merge { known.insert(merge.output) }
        for case .segment(let id) in directory.cleanup { known.insert(id) }
        try live.tx.withCursor(on: live.databases.searchSegments) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                let id = try IndexKeys.segmentID(of: current.key)
                if !known.contains(id) {
                    report.record(
                        .init(
                            kind: "orphan-segment", database: "search_segments", key: "\(id)",
                            detail: "keys of a segment the index directory does not know"))
                }
                guard id < UInt32.max else { return }
                entry = try IndexKeys.segment(id + 1).withUnsafeBytes { try cursor.seek(atLeast: $0) }
            }
        }
    }

    private func readable(_ key: [UInt8]) -> String {
        key.withUnsafeBytes { readableKey("items", $0) }
    }

    private func readableTerm(_ term: [UInt8]) -> String {
        guard let separator = term.firstIndex(of: 0) else { return String(decoding: term, as: UTF8.self) }
        let collection = String(decoding: term[..<separator], as: UTF8.self)
        var rest = term[(separator + 1)...]
        var marker = ""
        if rest.first == IndexKeys.tagMarker {
            marker = "#"
            rest = rest.dropFirst()
        }
        return "\(collection)/\(marker)\(String(decoding: rest, as: UTF8.self))"
    }
}
