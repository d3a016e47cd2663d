import Dispatch

/// Tokenizes one transaction's new search documents on a thread of its own, in the order they
/// were added, while the writer goes on applying the transaction's next events.
///
/// ``SearchIndexChanges`` hands texts over in chunks (``SearchIndexWriter/tokenizerChunk``) and
/// takes the documents back at the checkpoint (``finish(count:)``), so a commit of many events
/// tokenizes on the second core what it used to tokenize between its item writes. A commit of a
/// few events uses a tokenizer made at its checkpoint that works on the calling thread
/// (`onThread: false`) rather than wake another. Documents are tokenized one after the other
/// into one ``TermTable`` and one ``PositionCollector`` either way: the segment does not depend
/// on where its documents were tokenized.
///
/// A request rolled back inside a group commit restores ``SearchIndexChanges`` to a snapshot that
/// handed over fewer documents than this tokenizer received; the next ``submit(_:after:)`` or
/// ``finish(count:)`` says how many documents the snapshot handed over, and the tokenizer drops
/// the rest, in order.
///
/// At the checkpoint the tokenizer also encodes the new segment (``encodeSegment(of:)``) while
/// the writer runs the commit's merge work.
///
/// Thread safety: `queue` is serial. The tokenizing state (`terms`, `positions`, `documents`,
/// `segment`) is touched only by blocks on `queue`, and read by ``finish(count:)`` and
/// ``encodedSegment()`` inside `queue.sync` (without a queue, all of it runs on the calling
/// thread). The writer thread alone calls the methods.
final class DocumentTokenizer: @unchecked Sendable {
    private let writer: SearchIndexWriter
    /// The thread's queue (`nil`: the work runs on the calling thread).
    private let queue: DispatchQueue?
    private var terms = TermTable()
    private var positions = PositionCollector()
    private var documents: [SearchIndexWriter.Document] = []
    private var segment: NewSegment?

    /// A tokenizer for `writer`'s configuration, on a thread of its own or on the calling thread.
    init(writer: SearchIndexWriter, onThread: Bool) {
        self.writer = writer
        queue = onThread ? DispatchQueue(label: "EventStore.tokenizer", qos: .userInitiated) : nil
    }

    /// Runs `work` after the work started before, on the queue or at once.
    private func start(_ work: @escaping @Sendable () -> Void) {
        if let queue { queue.async(execute: work) } else { work() }
    }

    /// Waits for the work started before, then runs `body`.
    private func afterWork<T>(_ body: () -> T) -> T {
        queue?.sync(execute: body) ?? body()
    }

    /// Tokenizes `texts` after the first `count` documents handed over before (dropping any
    /// others, which a rolled-back request handed over).
    func submit(_ texts: [DocumentText], after count: Int) {
        start { [self] in
            keep(count)
            for text in texts { documents.append(writer.document(of: text, terms: &terms, positions: &positions)) }
        }
    }

    /// Waits for the documents handed over and returns the first `count` of them.
    func finish(count: Int) -> [SearchIndexWriter.Document] {
        afterWork {
            keep(count)
            return documents
        }
    }

    /// Encodes the segment of `documents` (tokenized here, returned by ``finish(count:)``) with
    /// the terms and positions tokenizing collected; ``encodedSegment()`` waits for it.
    func encodeSegment(of documents: [NewSegment.Document]) {
        start { [self] in segment = NewSegment(documents: documents, terms: terms, positions: positions) }
    }

    /// The segment ``encodeSegment(of:)`` encodes, once it is done.
    func encodedSegment() -> NewSegment {
        afterWork {
            guard let segment else { preconditionFailure("no segment was being encoded") }
            return segment
        }
    }

    /// Drops the documents after the first `count`. The terms and positions they added stay in
    /// the tables, unused: the segment holds only the postings of the documents it writes.
    private func keep(_ count: Int) {
        precondition(documents.count >= count, "a tokenizer lost documents it was handed")
        documents.removeLast(documents.count - count)
    }
}
