/// A plain-text table with aligned columns: the first column left-aligned, the others right-aligned.
struct TextTable {
    enum Line {
        case cells([String])
        case section(String)
        case rule
    }

    let header: [String]
    private(set) var lines: [Line] = []

    init(header: [String]) { self.header = header }

    mutating func add(_ cells: [String]) { lines.append(.cells(cells)) }
    mutating func section(_ title: String) { lines.append(.section(title)) }

    func render() -> String {
        var widths = header.map(\.count)
        for case .cells(let cells) in lines {
            for (index, cell) in cells.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        let total = widths.reduce(0, +) + 3 * (widths.count - 1)
        func row(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return index == 0 || index == cells.count - 1 ? cell + pad : pad + cell
            }.joined(separator: " | ").trimmingTrailingSpaces()
        }
        var output = [row(header), String(repeating: "-", count: total)]
        for line in lines {
            switch line {
            case .cells(let cells):
                output.append(row(cells + Array(repeating: "", count: max(0, header.count - cells.count))))
            case .section(let title): output.append(title)
            case .rule: output.append(String(repeating: "-", count: total))
            }
        }
        return output.joined(separator: "\n")
    }
}

extension String {
    /// The string without trailing spaces.
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

/// Number formatting for the report.
enum Format {
    /// `1234567.8` → `1,234,568`.
    static func grouped(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        var digits = String(abs(rounded))
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return (rounded < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    /// Three significant digits, at most three decimals: `0.0123` → `0.012`, `12.34` → `12.3`.
    static func decimal(_ value: Double) -> String {
        let decimals = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3
        return value.formatted(decimals: decimals)
    }

    static func ratio(_ value: Double) -> String {
        let decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2
        return value.formatted(decimals: decimals) + "×"
    }
}

extension Double {
    /// Fixed-point text with `decimals` decimals (no locale).
    func formatted(decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (self * scale).rounded()
        let negative = scaled < 0
        var text = String(Int(abs(scaled)))
        if decimals > 0 {
            while text.count <= decimals { text = "0" + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -decimals))
        }
        return (negative ? "-" : "") + text
    }
}
