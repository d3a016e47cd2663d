package import EventSync

/// The secret key of a store's epoch: it signs the continuity marks the server hands out
/// (``EventSync/MarkSignature``), so that only a mark the server made can prove its log was
/// rewound and start a new epoch.
///
/// A new key is made with every epoch (a process of an earlier version, during a rolling upgrade,
/// changes the epoch and keeps the key: still sound, since the epoch is part of what is signed)
/// and kept beside it (LMDB: the store's metadata
/// `sync.epoch-key`; PostgreSQL: `evstore_stores.epoch_key`). A server restored from an older
/// copy gets the key back with the epoch, so the marks it signed before the restore still
/// verify and prove the rewind. The key never leaves the server.
///
/// The signature is SipHash-2-4 keyed by the 16 bytes, over the epoch's bytes, a NUL, the seq
/// and the digest (8 bytes each, big-endian).
package struct EpochKey: Sendable, Hashable {
    /// The key's 16 bytes.
    package let bytes: [UInt8]

    /// The key of these 16 bytes, or `nil` when there are not 16.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// A new key from the system's secure random source.
    package static func random() -> EpochKey {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next(), generator.next()] as [UInt64]
        return EpochKey(bytes: words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } })!
    }

    /// The signature of the mark at `seq` of `epoch`, where the log's digest is `digest`.
    package func signature(epoch: String, seq: UInt64, digest: LogDigest) -> MarkSignature {
        var hash = SipHash24(k0: littleEndianWord(at: 0), k1: littleEndianWord(at: 8))
        hash.combine(epoch.utf8)
        hash.combine(CollectionOfOne(0))
        hash.combine(bigEndian: seq)
        hash.combine(bigEndian: digest.rawValue)
        return MarkSignature(rawValue: hash.finalize())
    }

    /// Whether `check` carries this key's signature of its epoch, mark and digest.
    package func signed(_ check: ContinuityCheck) -> Bool {
        check.signature == signature(epoch: check.epoch, seq: check.seq, digest: check.digest)
    }

    private func littleEndianWord(at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { word, index in word | UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
    }
}
