import EventStore
import EventSync
import Testing

/// The stored cursor: every version still reads, and damaged bytes are refused, never misread.
@Suite("Sync cursor")
struct SyncCursorTests {
    static let first = ReplicaID(high: 1, low: 2)
    static let second = ReplicaID(high: 0xAB, low: 7)

    /// A cursor's bytes in `version`: epoch "e1", four positions, the relays (version 2 on), the
    /// declarations (version 3 on) and the mark's signature (version 4).
    static func bytes(
        version: UInt8, relays: [UInt64] = [9], declared: [(ReplicaID, UInt64)] = [], signature: UInt64? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [version, 2] + Array("e1".utf8)
        func put(_ value: UInt64) { bytes += withUnsafeBytes(of: value.bigEndian, Array.init) }
        for value: UInt64 in [10, 20, 30, 40] { put(value) }
        if version >= 2 {
            put(UInt64(relays.count))
            relays.forEach(put)
        }
        if version >= 3 {
            put(UInt64(declared.count))
            for (replica, time) in declared {
                put(replica.high)
                put(replica.low)
                put(time)
            }
        }
        if version >= 4 {
            bytes.append(signature == nil ? 0 : 1)
            signature.map(put)
        }
        return bytes
    }

    @Test("a version 4 cursor keeps the signature of its mark, byte for byte")
    func signatureRoundTrip() throws {
        let stored = Self.bytes(version: 4, declared: [(Self.first, 1_000)], signature: 0xFEED)
        let cursor = try SyncCursor(decoding: stored)
        #expect(cursor.markSignature == MarkSignature(rawValue: 0xFEED))
        #expect(cursor.check?.signature == MarkSignature(rawValue: 0xFEED))
        #expect(cursor.declared == [Self.first: 1_000] && cursor.mark == 30)
        #expect(cursor.encoded() == stored)
        // Without declarations it is still version 4 (the declarations' count is 0).
        let bare = Self.bytes(version: 4, signature: 1)
        #expect(try SyncCursor(decoding: bare).encoded() == bare)
        // A version 4 cursor without a signature reads, and is written as the version it needs.
        let unsigned = try SyncCursor(decoding: Self.bytes(version: 4, declared: [(Self.first, 1_000)]))
        #expect(unsigned.markSignature == nil)
        #expect(unsigned.encoded() == Self.bytes(version: 3, declared: [(Self.first, 1_000)]))
    }

    @Test("a version 3 cursor keeps when it declared each replica id, byte for byte")
    func declarationsRoundTrip() throws {
        let stored = Self.bytes(version: 3, declared: [(Self.first, 1_000), (Self.second, 2_000)])
        let cursor = try SyncCursor(decoding: stored)
        #expect(cursor.declared == [Self.first: 1_000, Self.second: 2_000])
        #expect(cursor.deferredRelays == [9])
        #expect(cursor.epoch == "e1" && cursor.pushed == 10 && cursor.pulled == 20 && cursor.mark == 30)
        #expect(cursor.encoded() == stored)
    }

    @Test("cursors of versions 1 and 2 still read, with no declarations")
    func olderVersionsRead() throws {
        for version: UInt8 in [1, 2] {
            let cursor = try SyncCursor(decoding: Self.bytes(version: version))
            #expect(cursor.pushed == 10 && cursor.markDigest == LogDigest(rawValue: 40))
            #expect(cursor.deferredRelays == (version == 1 ? [] : [9]))
            #expect(cursor.declared.isEmpty)
            #expect(try SyncCursor(decoding: cursor.encoded()) == cursor)
        }
    }

    @Test("damaged cursors are refused: cut short, trailing bytes, counts past the end, a repeated id, a later version")
    func damagedCursorsAreRefused() {
        let good = Self.bytes(version: 3, declared: [(Self.first, 1_000)])
        let repeated = Self.bytes(version: 3, declared: [(Self.first, 1_000), (Self.first, 2_000)])
        var later = good
        later[0] = 5
        var badFlag = Self.bytes(version: 4, signature: 1)
        badFlag[badFlag.count - 9] = 2
        var overcounted = Self.bytes(version: 3, declared: [])
        overcounted[overcounted.count - 1] = 1
        let damaged: [[UInt8]] = [
            Array(good.dropLast()), good + [0], later, overcounted, repeated, [], [3],
            Array(Self.bytes(version: 2).dropLast(8)), badFlag, Array(Self.bytes(version: 4, signature: 1).dropLast(3)),
            Array(Self.bytes(version: 4).dropLast()),
        ]
        for bytes in damaged {
            #expect(throws: SyncError.self, "\(bytes.count) bytes") { try SyncCursor(decoding: bytes) }
        }
    }
}
