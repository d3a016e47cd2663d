import LMDB

/// Which doc ids are dead: a document version replaced by a newer one or removed.
///
/// The generation's `state` database holds a bitmap in chunks: key `search.dead.` and the chunk
/// number in 8 hexadecimal digits (`search.dead.0000001f`), value
/// 1,024 bytes covering 8,192 doc ids (bit `id % 8` of byte `(id % 8192) / 8`). A missing chunk
/// means no dead doc id in its range. Marking a document dead rewrites one chunk — one page —
/// instead of removing its postings from every term; merges drop dead postings later. Doc ids
/// are never reused, so a bit once set stays set.
enum DeadDocuments {
    static let chunkBytes = 1_024
    static let documentsPerChunk = UInt32(chunkBytes * 8)

    /// The prefix of every chunk's key in `state`.
    static let keyPrefix = Array("search.dead.".utf8)

    static func chunkKey(_ chunk: UInt32) -> [UInt8] {
        var key = keyPrefix
        for shift in stride(from: 28, through: 0, by: -4) { key.append(hexDigits[Int(chunk >> UInt32(shift) & 0xF)]) }
        return key
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The chunk number of a `state` key, or `nil` when it is not a chunk's key.
    static func chunk(ofKey key: [UInt8]) -> UInt32? {
        guard key.count == keyPrefix.count + 8, key.starts(with: keyPrefix) else { return nil }
        return UInt32(String(decoding: key.dropFirst(keyPrefix.count), as: UTF8.self), radix: 16)
    }

    /// Marks `docIDs` dead (chunk by chunk, in order).
    static func mark(_ docIDs: [UInt32], tx: WriteTransaction, database: Database) throws {
        var byChunk: [UInt32: [UInt32]] = [:]
        for id in docIDs { byChunk[id / documentsPerChunk, default: []].append(id) }
        for chunk in byChunk.keys.sorted() {
            let key = chunkKey(chunk)
            var bits = try tx.value(forKey: key, in: database) ?? [UInt8](repeating: 0, count: chunkBytes)
            guard bits.count == chunkBytes else { throw ByteReader.corrupt("dead-document bitmap") }
            for id in byChunk[chunk]! {
                let offset = Int(id % documentsPerChunk)
                bits[offset >> 3] |= 1 << UInt8(offset & 7)
            }
            try tx.put(bits, forKey: key, in: database)
        }
    }

    /// Answers "is this doc id dead?" within one transaction in which no document dies. Each
    /// chunk is read from the store once and kept (a copy of 1 KiB): a merge or a query walks
    /// one term's postings in doc-id order and then the next term's, so the same chunks come
    /// back for every term.
    struct Reader {
        let tx: ReadTransaction
        let database: Database
        private var chunk: UInt32 = .max
        /// The current chunk's bits; empty when none of its doc ids is dead.
        private var bits: [UInt8] = []
        private var chunks: [UInt32: [UInt8]] = [:]

        init(tx: ReadTransaction, database: Database) {
            self.tx = tx
            self.database = database
        }

        @inline(__always)
        mutating func isDead(_ docID: UInt32) throws -> Bool {
            let wanted = docID / DeadDocuments.documentsPerChunk
            if wanted != chunk { try load(wanted) }
            guard !bits.isEmpty else { return false }
            let offset = Int(docID % DeadDocuments.documentsPerChunk)
            return bits[offset >> 3] & (1 << UInt8(offset & 7)) != 0
        }

        /// Makes `wanted` the current chunk, reading it from the store the first time.
        private mutating func load(_ wanted: UInt32) throws {
            chunk = wanted
            if let known = chunks[wanted] {
                bits = known
                return
            }
            let stored = try DeadDocuments.chunkKey(wanted).withUnsafeBytes { try tx.value(forKey: $0, in: database) }
            if let stored, stored.count != DeadDocuments.chunkBytes { throw ByteReader.corrupt("dead-document bitmap") }
            bits = stored.map { Array($0) } ?? []
            chunks[wanted] = bits
        }

        /// How many doc ids of `range` are dead (a popcount of the chunks it covers).
        mutating func deadCount(in range: ClosedRange<UInt32>) throws -> Int {
            var count = 0
            var chunk = range.lowerBound / DeadDocuments.documentsPerChunk
            while chunk <= range.upperBound / DeadDocuments.documentsPerChunk {
                let base = chunk * DeadDocuments.documentsPerChunk
                let key = DeadDocuments.chunkKey(chunk)
                if let bits = try key.withUnsafeBytes({ try tx.value(forKey: $0, in: database) }) {
                    guard bits.count == DeadDocuments.chunkBytes else {
                        throw ByteReader.corrupt("dead-document bitmap")
                    }
                    let from = Int(max(range.lowerBound, base) - base)
                    let through = Int(min(range.upperBound, base + DeadDocuments.documentsPerChunk - 1) - base)
                    if from == 0 && through == Int(DeadDocuments.documentsPerChunk) - 1 {
                        for word in 0..<DeadDocuments.chunkBytes / 8 {
                            count += bits.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self).nonzeroBitCount
                        }
                    } else {
                        for offset in from...through where bits[offset >> 3] & (1 << UInt8(offset & 7)) != 0 {
                            count += 1
                        }
                    }
                }
                chunk += 1
            }
            return count
        }

        /// Whether a stored list holds a posting of a live document (decoded up to the first).
        mutating func hasLive(in list: UnsafeRawBufferPointer) throws -> Bool {
            var decoder = try PostingList.Decoder(list)
            while let posting = try decoder.nextStored() {
                if try !isDead(posting.docID) { return true }
            }
            return false
        }

        /// Calls `body` with each posting of a stored list whose document is live, in doc-id
        /// order; returns how many there were.
        @discardableResult
        mutating func forEachLive(in list: UnsafeRawBufferPointer, _ body: (Posting) throws -> Void) throws -> Int {
            var live = 0
            var decoder = try PostingList.Decoder(list)
            while let posting = try decoder.next() {
                if try isDead(posting.docID) { continue }
                live += 1
                try body(posting)
            }
            return live
        }
    }
}
