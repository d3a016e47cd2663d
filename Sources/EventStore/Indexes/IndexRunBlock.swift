import LMDB

/// A block of adjacent entries of one run and one index: the unit `g<N>.indexes` stores, so that
/// writing, merging and deleting a run costs one LMDB operation per block rather than per entry.
///
/// ```
/// key   = run id (u32 BE) · the block's first entry key
/// value = per entry, in key order:
///         varint shared (bytes in common with the previous entry's key; the first entry's
///                        "previous key" is the block's key, so it shares all of it)
///         varint suffix length · 2 + (1 when the entry is a tombstone)
///         suffix bytes
/// ```
///
/// A block holds entries of one index only (a new block starts where the index id changes) and
/// closes once its value passes ``targetBytes``.
enum IndexRunBlock {
    /// A block closes once its value holds this many bytes: about eight blocks to a 4 KiB page,
    /// which a split leaves reasonably full.
    static let targetBytes = 480

    /// A block's entries, decoded: their keys back to back in memory of its own (so they stay
    /// valid whatever is written to the database), until the next decode into it.
    final class Decoded {
        struct Entry {
            var start: Int
            var end: Int
            var live: Bool
        }
        // Only the walk that owns a block touches it: no dynamic exclusivity checks.
        @exclusivity(unchecked) fileprivate(set) var entries: [Entry] = []
        @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer
        @exclusivity(unchecked) private var capacity: Int
        /// Bytes of keys held.
        @exclusivity(unchecked) fileprivate(set) var count = 0

        init() {
            capacity = 1_024
            storage = .allocate(byteCount: capacity, alignment: 1)
        }

        deinit { storage.deallocate() }

        /// Entry `index`'s key: valid until the next decode into this block.
        @inline(__always)
        func key(_ index: Int) -> UnsafeRawBufferPointer {
            let entry = entries[index]
            return UnsafeRawBufferPointer(start: storage + entry.start, count: entry.end - entry.start)
        }

        /// Calls `body` with entry `index`'s key.
        func withKey<T>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
            try body(key(index))
        }

        fileprivate func removeAll() {
            entries.removeAll(keepingCapacity: true)
            count = 0
        }

        private func reserve(_ more: Int) {
            guard count + more > capacity else { return }
            let grown = max(capacity * 2, count + more)
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 1)
            bigger.copyMemory(from: storage, byteCount: count)
            storage.deallocate()
            storage = bigger
            capacity = grown
        }

        /// Appends `bytes` to the keys held.
        fileprivate func append(_ bytes: UnsafeRawBufferPointer) {
            reserve(bytes.count)
            if let base = bytes.baseAddress { (storage + count).copyMemory(from: base, byteCount: bytes.count) }
            count += bytes.count
        }

        /// Appends `length` bytes of the keys held, from `offset`.
        fileprivate func append(from offset: Int, length: Int) {
            reserve(length)
            (storage + count).copyMemory(from: storage + offset, byteCount: length)
            count += length
        }

        /// Whether the key from `start` to the end sorts after the one in `previous`.
        fileprivate func follows(from start: Int, _ previous: Range<Int>) -> Bool {
            compareBytes(
                UnsafeRawBufferPointer(start: storage + start, count: count - start),
                UnsafeRawBufferPointer(start: storage + previous.lowerBound, count: previous.count)) > 0
        }
    }

    /// Decodes the block stored under the entry key `first` (its LMDB key without the run
    /// prefix) with value `value`, replacing `decoded`'s contents.
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` for a value no block encodes: a first entry
    ///   other than `first`, keys out of order or a count that overruns the value.
    static func decode(first: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, into decoded: Decoded) throws {
        decoded.removeAll()
        var reader = ByteReader(value)
        var previous = 0..<0
        var isFirst = true
        while !reader.isAtEnd {
            let shared = try reader.readVarint()
            let tagged = try reader.readVarint()
            let suffixCount = tagged >> 1
            guard suffixCount <= UInt64(reader.remaining) else { throw ByteReader.corrupt("index block (suffix)") }
            let start = decoded.count
            if isFirst {
                guard shared == UInt64(first.count), suffixCount == 0 else {
                    throw ByteReader.corrupt("index block (first entry)")
                }
                decoded.append(first)
            } else {
                guard shared <= UInt64(previous.count) else { throw ByteReader.corrupt("index block (shared)") }
                decoded.append(from: previous.lowerBound, length: Int(shared))
                decoded.append(try reader.readBytes(Int(suffixCount)))
                guard decoded.follows(from: start, previous) else { throw ByteReader.corrupt("index block (order)") }
            }
            previous = start..<decoded.count
            decoded.entries.append(Decoded.Entry(start: start, end: decoded.count, live: tagged & 1 == 0))
            isFirst = false
        }
        guard !decoded.entries.isEmpty else { throw ByteReader.corrupt("index block (empty)") }
    }

    /// The number of entries in a block's value (for the run directory's counts).
    static func entryCount(_ value: UnsafeRawBufferPointer) throws -> Int {
        var reader = ByteReader(value)
        var count = 0
        while !reader.isAtEnd {
            _ = try reader.readVarint()
            _ = try reader.readBytes(Int(clamping: try reader.readVarint() >> 1))
            count += 1
        }
        return count
    }

    /// Writes a run's entries, given in key order, as blocks.
    struct Writer {
        private let runPrefix: [UInt8]
        private let options: PutOptions
        private var key: [UInt8] = []
        private var value = ByteWriter(capacity: IndexRunBlock.targetBytes + 64)
        private let previous = KeyBuffer()
        /// Entries written so far (blocks closed or not).
        private(set) var count: UInt64 = 0

        /// - Parameter appends: Whether the run's keys sort after every key of the database (a
        ///   new run id), so blocks are appended.
        init(run: UInt32, appends: Bool = true) {
            runPrefix = IndexRuns.prefix(run)
            options = appends ? .append : []
        }

        /// Adds an entry after the previous one (its key is greater).
        mutating func add(_ entry: UnsafeRawBufferPointer, live: Bool, cursor: WriteCursor) throws {
            if !value.bytes.isEmpty && (value.bytes.count >= IndexRunBlock.targetBytes || !sameIndex(entry)) {
                try flush(cursor: cursor)
            }
            let shared: Int
            if value.bytes.isEmpty {
                key = runPrefix
                key.append(contentsOf: entry)
                shared = entry.count
                previous.replace(with: entry)
            } else {
                shared = commonPrefixCount(previous.bytes, entry)
                previous.replace(keeping: shared, appending: UnsafeRawBufferPointer(rebasing: entry[shared...]))
            }
            let suffix = entry.count - shared
            value.write(varint: shared)
            value.write(varint: UInt64(suffix) << 1 | (live ? 0 : 1))
            value.write(raw: UnsafeRawBufferPointer(rebasing: entry[shared...]))
            count += 1
        }

        /// Whether `entry` belongs to the index of the previous entry (their index ids match).
        private func sameIndex(_ entry: UnsafeRawBufferPointer) -> Bool {
            commonPrefixCount(previous.bytes, entry) >= IndexKey.prefixBytes
        }

        /// Writes the open block, if any.
        mutating func flush(cursor: WriteCursor) throws {
            guard !value.bytes.isEmpty else { return }
            try key.withUnsafeBytes { key in
                _ = try value.bytes.withUnsafeBytes { try cursor.put($0, forKey: key, options: options) }
            }
            value.bytes.removeAll(keepingCapacity: true)
        }
    }
}
