import EventSync
import EventSyncService
import Testing

/// The keys that sign continuity marks: every part of a mark is signed, and another key signs
/// differently.
struct EpochKeyTests {
    let epoch = "0123456789abcdef0123456789abcdef"

    @Test func aKeySignsEveryPartOfAMark() throws {
        let key = EpochKey.random()
        let digest = LogDigest(rawValue: 42)
        let signature = key.signature(epoch: epoch, seq: 7, digest: digest)
        #expect(key.signed(ContinuityCheck(epoch: epoch, seq: 7, digest: digest, signature: signature)))
        let altered = [
            ContinuityCheck(epoch: epoch, seq: 7, digest: digest),
            ContinuityCheck(epoch: epoch, seq: 8, digest: digest, signature: signature),
            ContinuityCheck(epoch: epoch, seq: 7, digest: LogDigest(rawValue: 43), signature: signature),
            ContinuityCheck(epoch: "f" + epoch.dropFirst(), seq: 7, digest: digest, signature: signature),
            ContinuityCheck(
                epoch: epoch, seq: 7, digest: digest, signature: MarkSignature(rawValue: signature.rawValue ^ 1)),
        ]
        for check in altered { #expect(!key.signed(check), "\(check)") }
        #expect(EpochKey.random().signature(epoch: epoch, seq: 7, digest: digest) != signature)
    }

    @Test func aKeyIsSixteenBytes() throws {
        let key = EpochKey.random()
        #expect(key.bytes.count == 16 && key != EpochKey.random())
        #expect(EpochKey(bytes: key.bytes) == key)
        #expect(EpochKey(bytes: key.bytes.dropLast()) == nil && EpochKey(bytes: key.bytes + [0]) == nil)
    }

    /// A continuity check that claims a rewind needs the key's signature; one that matches the
    /// log needs none.
    @Test func onlyASignedMarkProvesARewind() throws {
        let key = EpochKey.random()
        let digest = LogDigest(rawValue: 9)
        let signed = ContinuityCheck(
            epoch: epoch, seq: 5, digest: digest, signature: key.signature(epoch: epoch, seq: 5, digest: digest))
        #expect(try signed.provesRewound(epoch: epoch, key: key, digestAtMark: nil))
        #expect(try signed.provesRewound(epoch: epoch, key: key, digestAtMark: .empty))
        #expect(try !signed.provesRewound(epoch: epoch, key: key, digestAtMark: digest))
        var unsigned = signed
        unsigned.signature = nil
        #expect(try !unsigned.provesRewound(epoch: epoch, key: key, digestAtMark: digest))
        for check in [unsigned, signed] {
            #expect(throws: SyncError.self) {
                try check.provesRewound(epoch: epoch, key: EpochKey.random(), digestAtMark: nil)
            }
        }
        #expect(throws: SyncError.self) { try unsigned.provesRewound(epoch: epoch, key: key, digestAtMark: nil) }
        #expect(throws: SyncError.self) { try signed.provesRewound(epoch: epoch, key: nil, digestAtMark: nil) }
    }
}
