/// An aligned text table: a header row, a rule, then rows; long cells are cut with `…`.
/// Rows may have fewer or more cells than there are titles.
///
/// Widths count terminal columns, so Hangul and other wide characters line up.
///
/// ```swift
/// var table = Table(columns: ["seq", "item"])
/// table.add(["1", "notes/n1"])
/// table.render().forEach { print($0) }
/// ```
package struct Table: Sendable {
    /// The column titles.
    package var columns: [String]
    /// The rows, one cell per column.
    package var rows: [[String]] = []
    /// The widest a cell may be.
    package var maxCellWidth = 60
    /// Indexes of the columns aligned to the right (numbers).
    package var rightAligned: Set<Int> = []

    /// Creates an empty table.
    package init(columns: [String]) { self.columns = columns }

    /// Adds a row.
    package mutating func add(_ cells: [String]) { rows.append(cells) }

    /// The table as lines of text: the header, a rule, then one line per row.
    package func render() -> [String] {
        let cut = rows.map { $0.map { Table.cut($0, maxCellWidth) } }
        let count = max(columns.count, cut.map(\.count).max() ?? 0)
        var widths = columns.map(Table.displayWidth) + Array(repeating: 0, count: count - columns.count)
        for row in cut {
            for (index, cell) in row.enumerated() {
                widths[index] = max(widths[index], Table.displayWidth(cell))
            }
        }
        func line(_ cells: [String]) -> String {
            let text = cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: max(0, widths[index] - Table.displayWidth(cell)))
                if rightAligned.contains(index) { return padding + cell }
                return index == cells.count - 1 ? cell : cell + padding
            }.joined(separator: "  ")
            return String(text.reversed().drop(while: { $0 == " " }).reversed())
        }
        let header = columns + Array(repeating: "", count: count - columns.count)
        return [line(header), widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")] + cut.map(line)
    }

    /// `text` on one line (newlines as `⏎`), cut to `width` columns with `…`.
    package static func cut(_ text: String, _ width: Int) -> String {
        let flat = text.replacing("\n", with: "⏎")
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
    /// full-width forms) take two, combining marks none.
    package static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            switch scalar.value {
            case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: width
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                0xFFE0...0xFFE6, 0x1F300...0x1FAFF, 0x20000...0x3FFFD:
                width + 2
            default: width + 1
            }
        }
    }

    /// `text` padded with spaces to `width` terminal columns.
    package static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - displayWidth(text)))
    }
}
