import Foundation
/// An aligned text table: a header row, a rule, then rows; long cells are cut with `…`.
public struct Table: Sendable {
    /// The column titles.
    public var columns: [String]
    /// The rows, one cell per column.
    public var rows: [[String]] = []
    /// The widest a cell may be.
    public var maxCellWidth = 60

    /// Creates an empty table.
    public init(columns: [String]) { self.columns = columns }

    /// Adds a row.
    public mutating func add(_ cells: [String]) { rows.append(cells) }

    /// The table as lines of text.
    public func render() -> [String] {
        let cut = rows.map { $0.map { Table.cut($0, maxCellWidth) } }
        var widths = columns.map(Table.displayWidth)
        for row in cut {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], Table.displayWidth(cell))
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1
                    ? cell : cell + String(repeating: " ", count: max(0, widths[index] - Table.displayWidth(cell)))
            }.joined(separator: "  ")
        }
        return [line(columns), widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")] + cut.map(line)
    }

    static func cut(_ text: String, _ width: Int) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: "⏎")
        guard displayWidth(flat) > width else { return flat }
        var result = ""
        var used = 0
        for character in flat {
            let next = displayWidth(String(character))
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// Columns a string takes on a terminal: East Asian wide characters (Hangul, CJK, kana,
    /// full-width forms) take two.
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            switch scalar.value {
            case 0x0300...0x036F, 0x200B...0x200F: width
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                0xFFE0...0xFFE6, 0x1F300...0x1FAFF, 0x20000...0x3FFFD:
                width + 2
            default: width + 1
            }
        }
    }
}
