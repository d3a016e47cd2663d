/// The state of a field merged as an add-wins set (``MergePolicy/addWinsSet``): per element,
/// the additions that hold it and the additions removed.
///
/// An element is in the set while it has a live addition. A removal takes away the additions
/// it names (those its writer had seen) and remembers them as removed, so an addition that
/// arrives after the removal that saw it stays out, and a second removal of the same addition
/// changes nothing: the state is the same for any order of the same events.
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

    /// One element's additions.
    struct Element: Sendable, Hashable {
        /// The additions that hold the element, ascending.
        var live: [Addition] = []
        /// The additions that removals took away (or will, when they arrive), ascending.
        var removed: [EventID] = []
    }

    var elements: [Value: Element] = [:]
    /// The greatest stamp of an event that wrote the field.
    var touched: Stamp

    /// The elements in the set, in the order of their earliest live addition (then by their
    /// encoded bytes, for additions made by one event).
    var values: [Value] {
        elements.compactMap { element, state in state.live.first.map { (element, $0) } }
            .sorted { lhs, rhs in
                lhs.1 != rhs.1 ? lhs.1 < rhs.1 : lhs.0.encodedBytes.lexicographicallyPrecedes(rhs.0.encodedBytes)
            }
            .map(\.0)
    }

    /// Whether an element is in the set.
    var isEmpty: Bool { !elements.values.contains { !$0.live.isEmpty } }

    /// The additions of `element` that hold it now.
    func live(_ element: Value) -> [Addition] { elements[element]?.live ?? [] }

    /// Adds `element` by the event `addition` (unless a removal already took that addition away).
    mutating func add(_ element: Value, by addition: Addition) {
        var state = elements[element] ?? Element()
        let id = addition.eventID
        if state.removed.contains(id) || state.live.contains(addition) { return }
        state.live.append(addition)
        state.live.sort()
        elements[element] = state
    }

    /// Removes the additions of `element` that `seen` names; returns the live additions that
    /// remain (concurrent additions the remover had not seen).
    @discardableResult
    mutating func remove(_ element: Value, seen: [EventID]) -> [Addition] {
        var state = elements[element] ?? Element()
        state.live.removeAll { seen.contains($0.eventID) }
        for id in seen where !state.removed.contains(id) { state.removed.append(id) }
        state.removed.sort()
        elements[element] = state
        return state.live
    }
}

/// The state of a field merged as a counter (``MergePolicy/counter``): the sum of every
/// increment (wrapping at 64 bits, so that any order of addition gives the same value).
struct CounterField: Sendable, Hashable {
    var sum: Int64 = 0
    /// The greatest stamp of an event that wrote the field.
    var touched: Stamp
}

extension Value {
    /// The value's binary encoding: the order of elements added by one event.
    var encodedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.write(self)
        return writer.bytes
    }
}
