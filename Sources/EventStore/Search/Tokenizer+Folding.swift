import Foundation

/// Folding: NFKC, lowercasing and diacritic removal, table-driven for the common scripts.
extension Tokenizer {
    /// Calls `body` with each scalar of `text` after NFKC, lowercasing and diacritic folding:
    /// `"Ｃafé Ångström"` gives the scalars of `"cafe angstrom"`, `"한국어"` stays `"한국어"`.
    ///
    /// Scalars below U+0530 and in U+1E00–U+1FFF are replaced by their precomputed folding (see
    /// ``foldTable``): their canonical decomposition without combining marks, so `é` → `e` but
    /// Hangul and every other script keep their composed form. Combining diacritical marks
    /// (U+0300–036F, U+1AB0–1AFF, U+1DC0–1DFF, U+20D0–20FF, U+FE20–FE2F) are dropped.
    ///
    /// When every scalar of `text` is ``isContextFree(_:)`` (the usual case for Latin, Greek,
    /// Cyrillic, Vietnamese, Hangul, Han and kana text in NFC), normalizing the whole text equals
    /// normalizing each scalar alone, so the table is applied directly and Foundation's NFKC is
    /// skipped; otherwise the text is first run through NFKC and `lowercased()`.
    static func forEachFoldedScalar(of text: String, _ body: (Unicode.Scalar) -> Void) {
        var contextFree = true
        for scalar in text.unicodeScalars where !isContextFree(scalar.value) {
            contextFree = false
            break
        }
        let source = contextFree ? text : text.precomposedStringWithCompatibilityMapping.lowercased()
        let table = foldTable
        for scalar in source.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                body(value &- 0x41 < 26 ? Unicode.Scalar(UInt8(value) | 0x20) : scalar)
                continue
            }
            let slot: Int
            if value < foldLowEnd {
                slot = Int(value)
            } else if value >= foldHighStart && value < foldHighEnd {
                slot = Int(value - foldHighStart) + Int(foldLowEnd)
            } else {
                switch value {
                case 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F:
                    continue
                default:
                    body(scalar)
                    continue
                }
            }
            let entry = table.entries[slot]
            if entry == foldIdentity {
                body(scalar)
            } else if entry == foldDrop {
                continue
            } else if entry & foldStringFlag != 0 {
                for folded in table.strings[Int(entry & ~foldStringFlag)].unicodeScalars {
                    body(folded)
                }
            } else if let folded = Unicode.Scalar(entry) {
                body(folded)
            }
        }
    }

    /// Whether the scalar `value` normalizes the same alone as in any context of other such
    /// scalars: ASCII; U+0080–U+052F and U+1E00–U+1FFF except combining marks (whose folding is
    /// precomputed); Hangul syllables, Han ideographs and kana, which NFKC and lowercasing keep
    /// (without conjoining jamo or voicing marks, which compose with them and are excluded).
    /// `isContextFree(0xE9)` (`é`) is true, `isContextFree(0x301)` (combining acute) is false.
    @inline(__always)
    private static func isContextFree(_ value: UInt32) -> Bool {
        switch value {
        case 0x0000...0x02FF, 0x0370...0x0482, 0x048A...0x052F, 0x1E00...0x1FFF,
            0x3041...0x3096, 0x30A1...0x30FA, 0x30FC...0x30FE, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xAC00...0xD7A3:
            return true
        default:
            return false
        }
    }

    /// End of the low folded range: scalars below U+0530 (Latin, Greek, Cyrillic).
    private static let foldLowEnd: UInt32 = 0x530
    /// Start of the high folded range: Latin Extended Additional (U+1E00) and Greek Extended.
    private static let foldHighStart: UInt32 = 0x1E00
    /// End of the high folded range (exclusive): U+2000.
    private static let foldHighEnd: UInt32 = 0x2000
    /// A ``FoldTable/entries`` value meaning "keep the scalar unchanged".
    private static let foldIdentity: UInt32 = 0xFFFF_FFFF
    /// A ``FoldTable/entries`` value meaning "drop the scalar" (a combining mark).
    private static let foldDrop: UInt32 = 0xFFFF_FFFE
    /// Flag of a ``FoldTable/entries`` value whose low bits index ``FoldTable/strings``.
    private static let foldStringFlag: UInt32 = 0x8000_0000

    /// Letters without a canonical decomposition that are still folded, as search users expect:
    /// `ß` → `ss`, `æ` → `ae`, `œ` → `oe`, `ø` → `o`, `đ` → `d`, `ħ` → `h`, `ı` → `i`, `ł` → `l`,
    /// `ŧ` → `t`, and final sigma `ς` → `σ` (lowercasing alone does not unify sigma forms).
    private static let extraFolds: [UInt32: String] = [
        0xDF: "ss", 0xE6: "ae", 0x153: "oe", 0xF8: "o", 0x111: "d", 0x127: "h",
        0x131: "i", 0x142: "l", 0x167: "t", 0x3C2: "σ",
    ]

    /// The complete folding (NFKC, lowercase, diacritics) of each scalar below U+0530 and in
    /// U+1E00–U+1FFF, e.g. `É` → `e`, `ǅ` → `dz`, `¼` → `1⁄4`, `ά` → `α`, U+0301 → nothing.
    private struct FoldTable: Sendable {
        /// Indexed by scalar value (the high range follows the low one): ``foldIdentity``,
        /// ``foldDrop``, one replacement scalar value, or ``foldStringFlag`` | index into ``strings``.
        var entries: [UInt32]
        /// Foldings longer than one scalar (`ß` → `ss`).
        var strings: [String]
    }

    /// The fold table, built once on first use with Foundation. A scalar's diacritic folding is its
    /// canonical decomposition without marks U+0300–036F (plus ``extraFolds``); its table entry is
    /// that folding applied to each scalar of its NFKC form, lowercased. Applied to a scalar of text
    /// that is already NFKC and lowercase, the entry is just the diacritic folding.
    private static let foldTable: FoldTable = {
        /// The diacritic folding of one scalar that is already NFKC and lowercase.
        func diacriticFold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
            let value = scalar.value
            if let extra = extraFolds[value] { return Array(extra.unicodeScalars) }
            guard value >= 0x80, value < foldLowEnd || (value >= foldHighStart && value < foldHighEnd) else {
                return [scalar]
            }
            let decomposed = String(Character(scalar)).decomposedStringWithCanonicalMapping
            return decomposed.unicodeScalars.filter { !(0x300...0x36F).contains($0.value) }
        }

        var table = FoldTable(
            entries: [UInt32](repeating: foldIdentity, count: Int(foldLowEnd + foldHighEnd - foldHighStart)),
            strings: []
        )
        let values = Array(UInt32(0x80)..<foldLowEnd) + Array(foldHighStart..<foldHighEnd)
        for (slot, value) in zip(0x80..., values) {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let normalized = String(Character(scalar)).precomposedStringWithCompatibilityMapping.lowercased()
            let folded = normalized.unicodeScalars.flatMap(diacriticFold)
            switch folded.count {
            case 0:
                table.entries[slot] = foldDrop
            case 1 where folded[0] == scalar:
                break
            case 1:
                table.entries[slot] = folded[0].value
            default:
                table.entries[slot] = foldStringFlag | UInt32(table.strings.count)
                var string = String.UnicodeScalarView()
                string.append(contentsOf: folded)
                table.strings.append(String(string))
            }
        }
        return table
    }()
}
