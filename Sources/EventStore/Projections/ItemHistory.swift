import LMDB

/// An item's history: the seqs of the events it took, oldest first, for replay, explain and
/// the counters' increments.
///
/// The newest ``ItemRecord/inlineHistory`` seqs are in the item's record; older ones are in
/// history chunks, entries of the `items` database right after the record:
///
/// ```
/// key    collection NUL id NUL first seq (8 bytes big-endian)   (see Keys.itemEvent)
/// value  each next seq of the chunk as a varint delta (> 0); empty for a chunk of one seq
/// ```
///
/// Store format 3 kept one entry per event with an empty value, which reads as a chunk of one.
/// An event adds no entry: its seq goes into the record the event rewrites anyway, and once in
/// ``ItemRecord/inlineHistory`` events the record's seqs move to a chunk, on the page the
/// record is on. Chunk boundaries depend only on the item's events, so a rebuild writes the
/// same chunks.
enum ItemHistory {
    /// The seqs of the item under `itemKey`, oldest first (none for an unknown item).
    static func seqs(of itemKey: [UInt8], tx: ReadTransaction, items: Database) throws -> [UInt64] {
        var seqs: [UInt64] = []
        let prefix = itemKey + [0]
        try prefix.withUnsafeBytes { start in
            try tx.forEach(in: items, from: start) { key, value in
                guard key.starts(with: prefix), key.count == prefix.count + 8 else { return false }
                let first = try Keys.seq(from: UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
                seqs.append(first)
                var reader = ByteReader(value)
                try appendDeltas(from: &reader, after: first, to: &seqs)
                return true
            }
        }
        let record = try itemKey.withUnsafeBytes { key in
            try tx.value(forKey: key, in: items).map { try ItemRecord(decoding: $0) }
        }
        if let record {
            guard (seqs.last ?? 0) < (record.history.first ?? .max) else {
                throw EventStoreError(.corrupt, "item history: a chunk overlaps the record's seqs")
            }
            seqs += record.history
        }
        return seqs
    }

    /// The key and value of the chunk that holds `seqs` (sorted, at least one).
    static func chunk(_ seqs: [UInt64], itemKey: [UInt8]) -> (key: [UInt8], value: [UInt8]) {
        var writer = ByteWriter(capacity: seqs.count * 2)
        var previous = seqs[0]
        for seq in seqs.dropFirst() {
            writer.write(varint: seq - previous)
            previous = seq
        }
        return (Keys.itemEvent(itemKey, seqs[0]), writer.bytes)
    }

    /// Writes `seqs` (sorted) as the first as a varint, then varint deltas.
    static func writeSeqs(_ seqs: [UInt64], into writer: inout ByteWriter) {
        var previous: UInt64 = 0
        for (index, seq) in seqs.enumerated() {
            writer.write(varint: index == 0 ? seq : seq - previous)
            previous = seq
        }
    }

    /// Reads `count` seqs written by ``writeSeqs(_:into:)``.
    static func readSeqs(count: Int, from reader: inout ByteReader) throws -> [UInt64] {
        guard count > 0 else { return [] }
        var seqs: [UInt64] = []
        seqs.reserveCapacity(count)
        let first = try reader.readVarint()
        guard first > 0 else { throw ByteReader.corrupt("item history seq 0") }
        seqs.append(first)
        for _ in 1..<count {
            let delta = try reader.readVarint()
            guard delta > 0, delta <= UInt64.max - seqs[seqs.count - 1] else {
                throw ByteReader.corrupt("item history delta")
            }
            seqs.append(seqs[seqs.count - 1] + delta)
        }
        return seqs
    }

    /// Appends the seqs of a chunk's value (varint deltas after `first`) to `seqs`.
    private static func appendDeltas(from reader: inout ByteReader, after first: UInt64, to seqs: inout [UInt64])
        throws
    {
        var previous = first
        while !reader.isAtEnd {
            let delta = try reader.readVarint()
            guard delta > 0, delta <= UInt64.max - previous else { throw ByteReader.corrupt("item history chunk") }
            previous += delta
            seqs.append(previous)
        }
    }
}
