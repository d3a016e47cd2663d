import Foundation
import Testing

/// A table as `evstore` prints it: a header of column titles, a rule of `─` runs (one per
/// column, two spaces apart), then rows whose cells sit inside their column, aligned left or
/// right. Widths are terminal columns: Hangul and other wide characters take two.
struct AlignedTable {
    /// The cells of each row, trimmed.
    var rows: [[String]]

    /// Parses the first table in `text` (the first line that starts with `columns[0]`, or its
    /// right-aligned form), recording an issue for a wrong header or a misaligned cell.
    init(_ text: String, columns: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard
            let headerIndex = lines.indices.first(where: { index in
                index + 1 < lines.count && lines[index].trimmingCharacters(in: .whitespaces).hasPrefix(columns[0])
                    && lines[index + 1].trimmingCharacters(in: .whitespaces).hasPrefix("─")
            })
        else {
            Issue.record("no table with columns \(columns) in:\n\(text)", sourceLocation: sourceLocation)
            rows = []
            return
        }
        let indent = lines[headerIndex + 1].prefix { $0 == " " }.count
        let rule = AlignedTable.cells(lines[headerIndex + 1])
        var spans: [Range<Int>] = []
        var start: Int?
        for (column, character) in rule.enumerated() {
            if character == "─" {
                if start == nil { start = column }
            } else if let begin = start {
                spans.append(begin..<column)
                start = nil
            }
        }
        if let begin = start { spans.append(begin..<rule.count) }
        #expect(
            spans.count == columns.count, "rule \(lines[headerIndex + 1]) has \(spans.count) columns",
            sourceLocation: sourceLocation)
        let header = AlignedTable.split(lines[headerIndex], spans: spans, sourceLocation: sourceLocation)
        #expect(header == columns, "header: \(lines[headerIndex])", sourceLocation: sourceLocation)
        var rows: [[String]] = []
        for line in lines[(headerIndex + 2)...] {
            // The table ends at an empty line or a line that is not indented like the table.
            if line.isEmpty || line.prefix(indent).contains(where: { $0 != " " }) { break }
            rows.append(AlignedTable.split(line, spans: spans, sourceLocation: sourceLocation))
        }
        self.rows = rows
    }

    /// A line as one character per terminal column (a wide character, then a `\0` filler).
    static func cells(_ line: String) -> [Character] {
        var cells: [Character] = []
        for character in line {
            cells.append(character)
            if isWide(character) { cells.append("\0") }
        }
        return cells
    }

    /// Whether a character takes two terminal columns (Hangul, CJK, kana, full-width forms).
    static func isWide(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value else { return false }
        return (0x1100...0x115F).contains(scalar) || (0x2E80...0xA4CF).contains(scalar)
            || (0xAC00...0xD7A3).contains(scalar) || (0xF900...0xFAFF).contains(scalar)
            || (0xFE30...0xFE4F).contains(scalar) || (0xFF00...0xFF60).contains(scalar)
            || (0xFFE0...0xFFE6).contains(scalar) || (0x1F300...0x1FAFF).contains(scalar)
    }

    /// Cuts a line into its cells, checking that each stays inside its column.
    static func split(_ line: String, spans: [Range<Int>], sourceLocation: SourceLocation) -> [String] {
        let columns = cells(line)
        func text(_ range: Range<Int>) -> String {
            let lower = min(range.lowerBound, columns.count)
            let upper = min(range.upperBound, columns.count)
            return String(columns[lower..<upper].filter { $0 != "\0" })
        }
        var result: [String] = []
        for (index, span) in spans.enumerated() {
            let isLast = index == spans.count - 1
            let upper = isLast ? max(columns.count, span.upperBound) : span.upperBound
            let cell = text(span.lowerBound..<upper)
            let trimmed = cell.trimmingCharacters(in: .whitespaces)
            result.append(trimmed)
            if index > 0 {
                #expect(
                    text((span.lowerBound - 2)..<span.lowerBound).allSatisfy { $0 == " " },
                    "no gap before column \(index) in \"\(line)\"", sourceLocation: sourceLocation)
            }
            if !trimmed.isEmpty && !isLast {
                let leftAligned = cell.first != " "
                let rightAligned = cell.last != " " && columns.count >= span.upperBound
                #expect(
                    leftAligned || rightAligned, "cell \"\(trimmed)\" is not aligned in its column in \"\(line)\"",
                    sourceLocation: sourceLocation)
            }
        }
        return result
    }
}
