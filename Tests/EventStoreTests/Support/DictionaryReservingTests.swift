import Testing

@testable import EventStore

/// `Dictionary.reserving(_:)`: an empty dictionary with the room asked for.
struct DictionaryReservingTests {
    @Test(arguments: [0, 1, 2, 5, 100]) func isEmptyWithTheRoomAskedFor(count: Int) {
        var fields: [String: Value] = .reserving(count)
        #expect(fields.isEmpty)
        #expect(fields.capacity >= count)
        // The same room as the standard library's own way of asking for it.
        #expect(fields.capacity == [String: Value](minimumCapacity: count).capacity)
        let capacity = fields.capacity
        for index in 0..<count { fields["f\(index)"] = .int(Int64(index)) }
        // Filling it to the room asked for does not grow it.
        #expect(fields.capacity == capacity)
        #expect(fields.count == count)
    }
}
