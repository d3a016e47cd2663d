import EventSyncService
import Testing

/// SipHash-2-4 against the reference implementation's vectors (key 00…0f, message 00…n−1).
struct SipHash24Tests {
    @Test(arguments: [
        (0, 0x726f_db47_dd0e_0e31 as UInt64), (1, 0x74f8_39c5_93dc_67fd), (7, 0xab02_00f5_8b01_d137),
        (8, 0x93f5_f579_9a93_2462), (15, 0xa129_ca61_49be_45e5), (63, 0x958a_324c_eb06_4572),
    ])
    func referenceVectors(length: Int, expected: UInt64) {
        // The key's bytes 00…07 and 08…0f, read little-endian.
        var hash = SipHash24(k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908)
        hash.combine((0..<length).map { UInt8($0) })
        #expect(hash.finalize() == expected)
    }

    @Test func bytesMayComeInPieces() {
        var whole = SipHash24(k0: 1, k1: 2)
        whole.combine((0..<40).map { UInt8($0) })
        var pieces = SipHash24(k0: 1, k1: 2)
        pieces.combine((0..<3).map { UInt8($0) })
        pieces.combine((3..<32).map { UInt8($0) })
        pieces.combine(bigEndian: 0x2021_2223_2425_2627)
        #expect(whole.finalize() == pieces.finalize())
    }
}
