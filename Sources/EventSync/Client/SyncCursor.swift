public import EventStore

/// Where a replica stands with one remote, kept in the replica's store metadata and advanced in
/// the same transaction as the events it covers.
///
/// - ``pushed``: the local seq through which the server acknowledged every event.
/// - ``pulled``: the server seq through which the replica ingested the server log.
/// - ``mark``, ``markDigest`` and ``markSignature``: the highest server seq this replica knows of
///   (from a page or a push answer), the server's ``LogDigest`` there and the server's
///   ``MarkSignature`` of them, sent back as a ``ContinuityCheck``.
/// - ``epoch``: the server epoch these positions belong to; a new epoch resets them all.
/// - ``deferredRelays``: local seqs of other replicas' events that the server would not take
///   from this store yet (their owner is another credential and has not pushed them since the
///   server's last restore, or they are stamped too far ahead of the server's clock); retried
///   on every sync until the server takes them, or their owner declared it no longer holds
///   them.
/// - ``declared``: when this store last declared to the server, in the cursor's epoch, how far
///   it holds each of its replica ids (``PushRequest/through``), by its physical clock; the
///   synchronizer declares again when it is due (see
///   ``Synchronizer/Configuration/declarationInterval``).
///
/// The cursor is stored under the metadata key `sync.remote.<remote name>`.
public struct SyncCursor: Sendable, Hashable {
    /// The server epoch the positions belong to (`nil` before the first sync).
    public internal(set) var epoch: String?
    /// The local seq through which the server acknowledged the events.
    public internal(set) var pushed: UInt64 = 0
    /// The server seq through which the server log was ingested.
    public internal(set) var pulled: UInt64 = 0
    /// The highest server seq this replica knows of.
    public internal(set) var mark: UInt64 = 0
    /// The server's log digest at ``mark``.
    public internal(set) var markDigest: LogDigest = .empty
    /// The server's signature of ``epoch``, ``mark`` and ``markDigest`` (`nil` when the server
    /// did not sign it, or before the first answer).
    public internal(set) var markSignature: MarkSignature?
    /// Local seqs of relayed events the server refused for now, retried on every sync.
    public internal(set) var deferredRelays: [UInt64] = []
    /// For each of this store's replica ids: when (its physical clock, milliseconds since 1970)
    /// the store last declared it to the server in ``epoch`` (missing: not yet, or not since it
    /// left the id).
    public internal(set) var declared: [ReplicaID: UInt64] = [:]

    /// The cursor of a replica that never synced.
    public init() {}

    /// The continuity check sent with every request (`nil` before the first sync).
    public var check: ContinuityCheck? {
        epoch.map { ContinuityCheck(epoch: $0, seq: mark, digest: markDigest, signature: markSignature) }
    }

    /// Raises the mark to `seq`, with the server's digest there and its signature (never lowers
    /// it; at the same seq, the newer answer replaces the digest and the signature).
    mutating func raiseMark(_ seq: UInt64, _ digest: LogDigest, _ signature: MarkSignature?) {
        guard seq >= mark else { return }
        mark = seq
        markDigest = digest
        markSignature = signature
    }

    /// Forgets every position and adopts `epoch`.
    mutating func reset(epoch: String?) {
        self = SyncCursor()
        self.epoch = epoch
    }

    // MARK: Storage

    /// Version 2 adds the deferred relays after the four positions, version 3 the declarations
    /// after them, version 4 the mark's signature after those (a byte, 1 when there is one, then
    /// its 8 bytes). Versions 1 to 3 are still read; a cursor is written in the lowest version
    /// that holds it. An earlier release refuses a later version as damaged, so a store that
    /// synced with a server that signs marks (version 4) cannot sync with that remote after a
    /// downgrade of the library until its cursor is reset.
    static let formatVersion: UInt8 = 4

    /// The prefix of every cursor's metadata key.
    package static let keyPrefix = "sync.remote."

    /// The metadata key for the remote `name` (long names are hashed to fit).
    static func key(for name: String) -> String {
        let key = keyPrefix + name
        guard key.utf8.count > 200 else { return key }
        var hash = FNV1a()
        hash.combine(bytes: Array(name.utf8))
        return "sync.remote.#" + hex64(hash.state)
    }

    package func encoded() -> [UInt8] {
        let epochBytes = Array((epoch ?? "").utf8.prefix(255))
        // The lowest version that holds the cursor: a store opened again by an earlier release
        // still reads it.
        let version: UInt8 = markSignature != nil ? 4 : declared.isEmpty ? 2 : 3
        var bytes: [UInt8] = [version, UInt8(epochBytes.count)]
        bytes += epochBytes
        for value in [pushed, pulled, mark, markDigest.rawValue, UInt64(deferredRelays.count)] + deferredRelays {
            bytes += bigEndian(value)
        }
        guard version >= 3 else { return bytes }
        bytes += bigEndian(UInt64(declared.count))
        for (replica, time) in declared.sorted(by: { $0.key.description < $1.key.description }) {
            bytes += bigEndian(replica.high) + bigEndian(replica.low) + bigEndian(time)
        }
        guard version >= 4, let markSignature else { return bytes }
        bytes.append(1)
        bytes += bigEndian(markSignature.rawValue)
        return bytes
    }

    package init(decoding bytes: [UInt8]) throws {
        let damaged = SyncError(.local, "the stored sync cursor is damaged")
        guard bytes.count >= 2, (1...SyncCursor.formatVersion).contains(bytes[0]) else { throw damaged }
        let version = bytes[0]
        let length = Int(bytes[1])
        var offset = 2 + length
        guard bytes.count >= offset + 32 else { throw damaged }
        epoch = length == 0 ? nil : String(decoding: bytes[2..<offset], as: UTF8.self)
        func next() throws -> UInt64 {
            guard bytes.count - offset >= 8 else { throw damaged }
            defer { offset += 8 }
            return decodeBigEndian(Array(bytes[offset..<(offset + 8)]))
        }
        /// A count of `width`-byte entries that the remaining bytes can hold.
        func count(width: Int) throws -> Int {
            let count = try next()
            guard count <= UInt64((bytes.count - offset) / width) else { throw damaged }
            return Int(count)
        }
        pushed = try next()
        pulled = try next()
        mark = try next()
        markDigest = LogDigest(rawValue: try next())
        if version >= 2 {
            deferredRelays = try (0..<count(width: 8)).map { _ in try next() }
        }
        if version >= 3 {
            for _ in 0..<(try count(width: 24)) {
                let replica = ReplicaID(high: try next(), low: try next())
                guard declared.updateValue(try next(), forKey: replica) == nil else { throw damaged }
            }
        }
        if version >= 4 {
            guard offset < bytes.count, bytes[offset] <= 1 else { throw damaged }
            offset += 1
            if bytes[offset - 1] == 1 { markSignature = MarkSignature(rawValue: try next()) }
        }
        guard offset == bytes.count else { throw damaged }
    }

    static func load(_ reader: StoreReader, key: String) throws -> SyncCursor {
        try reader.metadata(forKey: key).map { try SyncCursor(decoding: $0) } ?? SyncCursor()
    }

    func save(_ writer: StoreWriter, key: String) throws {
        try writer.setMetadata(encoded(), forKey: key)
    }
}
