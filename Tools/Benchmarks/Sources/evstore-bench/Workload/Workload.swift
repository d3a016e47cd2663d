/// What one workload event does.
enum Operation: UInt8, Sendable {
    case put = 1
    case patch = 2
    case delete = 3
}

/// One event of the workload, independent of any engine.
///
/// A put carries all three fields; a patch one or two of them; a delete none.
struct WorkEvent: Sendable {
    var operation: Operation
    /// The item's index, `0..<itemCount`.
    var item: Int
    var title: String?
    var content: String?
    var tags: [String]?

    /// The item's id, as every engine stores it.
    var itemID: String { Workload.itemID(item) }
}

/// The deterministic workload: `events` events over `events / 4` items in one collection.
///
/// Each event picks an item uniformly. An item that does not exist (never written, or deleted)
/// gets a put; an existing one gets a put (30%), a patch of one or two fields (58%) or a
/// delete (12%). Titles have 3–6 words, contents 15–30 words, tags 1–3 distinct words, all from
/// the ``Vocabulary``. The same seed gives the same events, byte for byte: ``checksum`` proves it.
struct Workload: Sendable {
    static let collection = "notes"

    let events: Int
    let seed: UInt64
    let vocabulary: Vocabulary

    init(events: Int, seed: UInt64) {
        self.events = events
        self.seed = seed
        self.vocabulary = Vocabulary(seed: seed)
    }

    var itemCount: Int { max(1, events / 4) }

    static func itemID(_ index: Int) -> String { "item-" + String(index) }

    /// A fresh generator at the first event.
    func makeGenerator() -> Generator { Generator(workload: self) }

    /// Generates events one at a time, so that memory stays flat at any size.
    struct Generator: IteratorProtocol {
        let workload: Workload
        private var random: SeededRandom
        private var live: [Bool]
        private(set) var produced = 0
        /// The checksum of every event produced so far.
        private(set) var checksum = FNV1a()
        /// How many puts, patches and deletes were produced.
        private(set) var puts = 0
        private(set) var patches = 0
        private(set) var deletes = 0

        init(workload: Workload) {
            self.workload = workload
            self.random = SeededRandom(seed: workload.seed)
            self.live = Array(repeating: false, count: workload.itemCount)
        }

        mutating func next() -> WorkEvent? {
            guard produced < workload.events else { return nil }
            produced += 1
            let item = random.below(workload.itemCount)
            var event: WorkEvent
            if !live[item] {
                event = put(item)
            } else {
                let roll = random.below(100)
                if roll < 30 {
                    event = put(item)
                } else if roll < 88 {
                    event = WorkEvent(operation: .patch, item: item)
                    let skipped = random.below(3)
                    let fields = random.below(2) == 0 ? [skipped] : [0, 1, 2].filter { $0 != skipped }
                    for field in fields {
                        switch field {
                        case 0: event.title = title()
                        case 1: event.content = content()
                        default: event.tags = tags()
                        }
                    }
                } else {
                    event = WorkEvent(operation: .delete, item: item)
                }
            }
            live[item] = event.operation != .delete
            record(event)
            return event
        }

        /// The next `count` events (fewer at the end).
        mutating func next(_ count: Int) -> [WorkEvent] {
            var batch: [WorkEvent] = []
            batch.reserveCapacity(count)
            while batch.count < count, let event = next() { batch.append(event) }
            return batch
        }

        private mutating func put(_ item: Int) -> WorkEvent {
            WorkEvent(operation: .put, item: item, title: title(), content: content(), tags: tags())
        }

        private mutating func title() -> String {
            workload.vocabulary.text(words: random.between(3...6), &random)
        }

        private mutating func content() -> String {
            workload.vocabulary.text(words: random.between(15...30), &random)
        }

        private mutating func tags() -> [String] {
            var tags: [String] = []
            let count = random.between(1...3)
            while tags.count < count {
                let tag = workload.vocabulary.zipfWord(&random)
                if !tags.contains(tag) { tags.append(tag) }
            }
            return tags
        }

        private mutating func record(_ event: WorkEvent) {
            switch event.operation {
            case .put: puts += 1
            case .patch: patches += 1
            case .delete: deletes += 1
            }
            checksum.add(event.operation.rawValue)
            checksum.add(event.item)
            checksum.add(event.title ?? "")
            checksum.add(event.content ?? "")
            for tag in event.tags ?? [] { checksum.add(tag) }
            checksum.add(0xFE)
        }
    }
}
