/// One task of the ``TaskWorkload``, independent of any engine (`Codable` for EventStore's
/// typed queries).
struct TaskItem: Sendable, Equatable, Codable, Identifiable {
    var id: String
    /// One of ``TaskWorkload/folderCount`` folders, `folder-00` to `folder-99`.
    var folder: String
    /// Seconds since 1970; unique across the workload, so that `ORDER BY due` has no ties and
    /// every engine returns the same rows in the same order.
    var due: Int64
    var done: Bool
    var title: String
}

/// The deterministic tasks collection of the `queries` and `livequery` scenarios: `count` tasks
/// (`task-0` …), each in one of 100 folders (uniformly), due at a distinct second within about
/// `count × 50` seconds after 2026-01-01, done with probability 0.7, titled with 2–5 words of
/// the ``Vocabulary``.
///
/// The tasks are appended as puts, 1,000 per transaction, in id order; the queries are drawn
/// from the same seed, so every engine gets the same tasks and questions.
struct TaskWorkload: Sendable {
    static let collection = "tasks"
    static let folderCount = 100
    /// 2026-01-01T00:00:00Z.
    static let firstDue: Int64 = 1_767_225_600
    /// Puts per transaction of the batched append.
    static let batch = 1_000

    let count: Int
    let seed: UInt64
    let vocabulary: Vocabulary

    init(count: Int, seed: UInt64, vocabulary: Vocabulary) {
        self.count = count
        self.seed = seed
        self.vocabulary = vocabulary
    }

    /// One line for the report's header.
    static func summary(count: Int) -> String {
        "tasks (11–13): \(Format.grouped(Double(count))) tasks in \(folderCount) folders, 30% not done, distinct due dates"
    }

    static func folder(_ index: Int) -> String {
        index < 10 ? "folder-0\(index)" : "folder-\(index)"
    }

    /// The span of due dates in seconds.
    var dueSpan: Int { max(count, 1) * 50 }

    /// Every task, in append order.
    func tasks() -> [TaskItem] {
        var random = SeededRandom(seed: seed ^ 0x5441_534B_5341_4C4C)
        var used = Set<Int64>(minimumCapacity: count)
        var tasks: [TaskItem] = []
        tasks.reserveCapacity(count)
        for index in 0..<count {
            var due = TaskWorkload.firstDue + Int64(random.below(dueSpan))
            while !used.insert(due).inserted { due = TaskWorkload.firstDue + Int64(random.below(dueSpan)) }
            tasks.append(
                TaskItem(
                    id: "task-\(index)", folder: TaskWorkload.folder(random.below(TaskWorkload.folderCount)), due: due,
                    done: random.below(10) < 7, title: vocabulary.text(words: random.between(2...5), &random)))
        }
        return tasks
    }

    /// The folders of `count` `folder == X` queries, drawn uniformly.
    func folderQueries(_ count: Int) -> [String] {
        var random = SeededRandom(seed: seed ^ 0x464F_4C44_4552_5153)
        return (0..<count).map { _ in TaskWorkload.folder(random.below(TaskWorkload.folderCount)) }
    }

    /// The lower bounds of `count` `done == false AND due >= T` queries, drawn uniformly over
    /// the span of due dates.
    func dueThresholds(_ count: Int) -> [Int64] {
        var random = SeededRandom(seed: seed ^ 0x4455_4541_4654_4552)
        return (0..<count).map { _ in TaskWorkload.firstDue + Int64(random.below(dueSpan)) }
    }
}
