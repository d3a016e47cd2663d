import Testing

@testable import EventStore

/// Replica ids are 32 lowercase hex digits, and parse from exactly that.
struct ReplicaIDTests {
    @Test func hexRoundTripsAndOrdersLikeTheHalves() {
        let ids = [
            ReplicaID(high: 0, low: 0), ReplicaID(high: 0, low: 1), ReplicaID(high: 1, low: 0),
            ReplicaID(high: .max, low: .max),
        ]
        #expect(
            ids.map(\.description) == [
                "00000000000000000000000000000000", "00000000000000000000000000000001",
                "00000000000000010000000000000000", "ffffffffffffffffffffffffffffffff",
            ])
        for id in ids { #expect(ReplicaID(hex: id.description) == id) }
        #expect(ids == ids.sorted())
        #expect(ReplicaID(hex: "ABCDEF0123456789abcdef0123456789")?.description == "abcdef0123456789abcdef0123456789")
        let random = (0..<100).map { _ in ReplicaID.random() }
        #expect(Set(random).count == 100)
    }

    /// Anything but 32 hex digits is refused, so one replica has one spelling.
    @Test(arguments: [
        "", "0", String(repeating: "0", count: 31), String(repeating: "0", count: 33),
        "g" + String(repeating: "0", count: 31),
        "+" + String(repeating: "0", count: 31), "-" + String(repeating: "0", count: 31),
        String(repeating: "0", count: 16) + "+" + String(repeating: "0", count: 15),
        String(repeating: "0", count: 16) + "-" + String(repeating: "0", count: 15),
        " " + String(repeating: "0", count: 31), "0x" + String(repeating: "0", count: 30),
    ])
    func malformedHexIsRefused(text: String) {
        #expect(
            ReplicaID(hex: text) == nil,
            "\(text.debugDescription) parsed as \(String(describing: ReplicaID(hex: text)))")
    }
}
