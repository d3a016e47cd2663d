/// One key's bytes in memory of its own, replaced in place: the previous key a block writer
/// shares a prefix with, the key a walk yielded last. Replacing copies the bytes and allocates
/// only to grow, where an array would check its uniqueness and capacity through generic code.
final class KeyBuffer {
    // Only the writer or walk that owns a buffer touches it: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    /// Bytes held.
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit { storage.deallocate() }

    /// The bytes held: valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// Holds `bytes` instead.
    func replace(with bytes: UnsafeRawBufferPointer) {
        replace(keeping: 0, appending: bytes)
    }

    /// Keeps the first `kept` bytes held and appends `suffix` after them.
    func replace(keeping kept: Int, appending suffix: UnsafeRawBufferPointer) {
        precondition(kept <= count, "a key buffer keeps at most the bytes it holds")
        let total = kept + suffix.count
        if total > capacity {
            let grown = max(capacity * 2, total)
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            bigger.copyMemory(from: storage, byteCount: kept)
            storage.deallocate()
            storage = bigger
            capacity = grown
        }
        if let base = suffix.baseAddress { (storage + kept).copyMemory(from: base, byteCount: suffix.count) }
        count = total
    }
}
