import EventStore

/// Where a replica stands with one remote, kept in the replica's store metadata and advanced in
/// the same transaction as the events it covers.
///
/// - ``pushed``: the local seq through which the server acknowledged every event.
/// - ``pulled``: the server seq through which the replica ingested the server log.
/// - ``mark`` and ``markDigest``: the highest server seq this replica knows of (from a page or a
///   push answer) and the server's ``LogDigest`` there, sent back as a ``ContinuityCheck``.
/// - ``epoch``: the server epoch these positions belong to; a new epoch resets them all.
/// - ``deferredRelays``: local seqs of other replicas' events that the server would not take
///   from this store yet (their owner is another credential and has not pushed them since the
///   server's last restore); retried on every sync until the owner pushed them or declared it
///   no longer holds them.
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
    /// Local seqs of relayed events the server refused for now, retried on every sync.
    public internal(set) var deferredRelays: [UInt64] = []

    /// The cursor of a replica that never synced.
    public init() {}

    /// The continuity check sent with every request (`nil` before the first sync).
    public var check: ContinuityCheck? {
        epoch.map { ContinuityCheck(epoch: $0, seq: mark, digest: markDigest) }
    }

    /// Raises the mark to `seq` (never lowers it).
    mutating func raiseMark(_ seq: UInt64, _ digest: LogDigest) {
        guard seq >= mark else { return }
        mark = seq
        markDigest = digest
    }

    /// Forgets every position and adopts `epoch`.
    mutating func reset(epoch: String) {
        self = SyncCursor()
        self.epoch = epoch
    }

    // MARK: Storage

    /// Version 2 adds the deferred relays after the four positions (version 1 is still read).
    static let formatVersion: UInt8 = 2

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
        var bytes: [UInt8] = [SyncCursor.formatVersion, UInt8(epochBytes.count)]
        bytes += epochBytes
        for value in [pushed, pulled, mark, markDigest.rawValue, UInt64(deferredRelays.count)] + deferredRelays {
            bytes += bigEndian(value)
        }
        return bytes
    }

    package init(decoding bytes: [UInt8]) throws {
        let damaged = SyncError(.local, "the stored sync cursor is damaged")
        guard bytes.count >= 2, bytes[0] == 1 || bytes[0] == 2 else { throw damaged }
        let length = Int(bytes[1])
        let fixed = 2 + length + 32
        guard bytes.count >= fixed else { throw damaged }
        epoch = length == 0 ? nil : String(decoding: bytes[2..<(2 + length)], as: UTF8.self)
        var offset = 2 + length
        func next() -> UInt64 {
            defer { offset += 8 }
            return decodeBigEndian(Array(bytes[offset..<(offset + 8)]))
        }
        pushed = next()
        pulled = next()
        mark = next()
        markDigest = LogDigest(rawValue: next())
        if bytes[0] == 1 {
            guard bytes.count == fixed else { throw damaged }
            return
        }
        guard bytes.count >= fixed + 8 else { throw damaged }
        let count = next()
        guard count <= UInt64((bytes.count - fixed - 8) / 8), bytes.count == fixed + 8 + Int(count) * 8 else {
            throw damaged
        }
        deferredRelays = (0..<count).map { _ in next() }
    }

    static func load(_ reader: StoreReader, key: String) throws -> SyncCursor {
        try reader.metadata(forKey: key).map { try SyncCursor(decoding: $0) } ?? SyncCursor()
    }

    func save(_ writer: StoreWriter, key: String) throws {
        try writer.setMetadata(encoded(), forKey: key)
    }
}
