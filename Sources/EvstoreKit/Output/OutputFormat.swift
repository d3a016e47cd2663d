import Foundation

/// How a command prints records.
package enum OutputFormat: String, CaseIterable, Sendable {
    /// An aligned, readable table (the default on a terminal).
    case table
    /// One JSON object a line, with stable field names (the default when piped).
    case jsonl
}

/// Where the tool's lines go; tests collect them.
package struct Output: Sendable {
    let write: @Sendable (String) -> Void

    /// Creates an output that hands each line to `write`.
    package init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Standard output.
    package static let standard = Output { print($0) }

    /// Standard output, each line flushed as it is printed (for commands that run until
    /// interrupted, whose lines a pipe must see as they happen).
    package static let standardFlushed = Output { line in
        print(line)
        fflush(nil)
    }

    /// Prints one line.
    package func line(_ text: String = "") { write(text) }
}
