/// The state of a field merged as an add-wins set (``MergePolicy/addWinsSet``): per element,
/// the additions that hold it and the additions removed.
///
/// An element is in the set while it has a live addition. A removal takes away the additions
/// it names (those its writer had seen) and remembers them as removed, so an addition that
/// arrives after the removal that saw it stays out, and a second removal of the same addition
/// changes nothing: the state is the same for any order of the same events. Elements are told
/// apart by their encoded bytes, not by `==` (which finds two Unicode forms of a string, or
/// `0.0` and `-0.0`, equal), so every replica keeps the same bytes.
struct SetField: Sendable, Hashable {
    /// One addition of an element: the event that made it.
    struct Addition: Sendable, Hashable, Comparable {
        var stamp: Stamp
        var sequence: UInt64

        var eventID: EventID { EventID(origin: stamp.origin, sequence: sequence) }

        static func < (lhs: Addition, rhs: Addition) -> Bool {
            lhs.stamp != rhs.stamp ? lhs.stamp < rhs.stamp : lhs.sequence < rhs.sequence
        }
    }

    /// One element and its additions.
    struct Element: Sendable, Hashable {
        var value: Value
        /// The additions that hold the element, ascending.
        var live: [Addition] = []
        /// The additions that removals took away (or will, when they arrive), ascending.
        var removed: [EventID] = []
    }

    /// The elements by their encoded bytes.
    var elements: [[UInt8]: Element] = [:]
    /// The greatest stamp of an event that updated the field.
    var touched: Stamp

    /// The elements with a live addition, in the order of their earliest one (then by their
    /// encoded bytes, for elements one event added).
    var values: [Value] {
        elements.compactMap { key, element in element.live.first.map { (key, element.value, $0) } }
            .sorted { lhs, rhs in lhs.2 != rhs.2 ? lhs.2 < rhs.2 : lhs.0.lexicographicallyPrecedes(rhs.0) }
            .map(\.1)
    }

    /// Whether no element has a live addition.
    var isEmpty: Bool { !elements.values.contains { !$0.live.isEmpty } }

    /// The live additions of the element with encoded bytes `key`.
    func live(_ key: [UInt8]) -> [Addition] { elements[key]?.live ?? [] }

    /// Whether a removal took away the addition `id` of the element with encoded bytes `key`.
    func isRemoved(_ key: [UInt8], _ id: EventID) -> Bool {
        elements[key].map { $0.removed.binarySearch(id) != nil } ?? false
    }

    /// Adds `element` by the event `addition` (unless a removal already took that addition away).
    mutating func add(_ element: Value, by addition: Addition) {
        let key = element.encodedBytes
        var state = elements[key] ?? Element(value: element)
        if state.removed.binarySearch(addition.eventID) != nil || state.live.contains(addition) { return }
        state.live.insert(addition, at: state.live.firstIndex { addition < $0 } ?? state.live.count)
        elements[key] = state
    }

    /// Removes the additions of `element` that `seen` names; returns the live additions that
    /// remain (concurrent additions the remover had not seen).
    @discardableResult
    mutating func remove(_ element: Value, seen: [EventID]) -> [Addition] {
        let key = element.encodedBytes
        var state = elements[key] ?? Element(value: element)
        if !state.live.isEmpty {
            let taken = Set(seen)
            state.live.removeAll { taken.contains($0.eventID) }
        }
        for id in seen {
            switch state.removed.binarySearch(id) {
            case .some: continue
            case .none: state.removed.insert(id, at: state.removed.partitioningIndex { id < $0 })
            }
        }
        elements[key] = state
        return state.live
    }
}

/// The state of a field merged as a counter (``MergePolicy/counter``): the sum of every
/// increment (wrapping at 64 bits, so that any order of addition gives the same value).
struct CounterField: Sendable, Hashable {
    var sum: Int64 = 0
    /// The greatest stamp of an event that updated the field.
    var touched: Stamp
}

extension Value {
    /// The value's binary encoding: what tells set elements apart and orders them.
    var encodedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.write(self)
        return writer.bytes
    }
}

extension Array where Element: Comparable {
    /// The index of `element` in this ascending array, or `nil`.
    func binarySearch(_ element: Element) -> Int? {
        let index = partitioningIndex { !($0 < element) }
        return index < count && self[index] == element ? index : nil
    }

    /// The first index whose element satisfies `belongs` (which must hold for a suffix).
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
