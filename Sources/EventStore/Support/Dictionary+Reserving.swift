extension Dictionary {
    /// An empty dictionary with room for `count` entries.
    ///
    /// `init(minimumCapacity:)` and `reserveCapacity(_:)` run unspecialized in the standard
    /// library, which looks up the storage's generic metadata on every call: about 1,200
    /// instructions even for a capacity of 0, more than decoding a small event's fields. This
    /// allocates through `init(uniqueKeysWithValues:)`, which the compiler specializes, from a
    /// sequence without elements that promises `count` of them.
    @inline(__always)
    static func reserving(_ count: Int) -> Self {
        guard count > 0 else { return [:] }
        return Dictionary(uniqueKeysWithValues: RoomFor<Key, Value>(count: count))
    }
}

/// No entries, with `count` as its underestimated count: the room ``Dictionary/reserving(_:)``
/// asks for. This breaks on purpose the rule that a sequence has at least its underestimated
/// count of elements: `init(uniqueKeysWithValues:)` only sizes its storage by the count, then
/// inserts what the sequence yields.
private struct RoomFor<Key, Value>: Sequence {
    let count: Int

    var underestimatedCount: Int { count }

    func makeIterator() -> EmptyCollection<(Key, Value)>.Iterator { EmptyCollection().makeIterator() }
}
