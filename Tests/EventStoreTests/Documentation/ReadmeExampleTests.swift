import EventStoreTestSupport
import Foundation
import Testing

/// The README's Quick start cannot rot: its Swift blocks are the bodies of ``ReadmeExamples``,
/// which this suite checks line for line and then runs against real stores.
@Suite struct ReadmeExampleTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift blocks of the README's Quick start, without their `import` lines.
    static func readmeBlocks() throws -> [[String]] {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "## Quick start"))
        let end = try #require(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
        var blocks: [[String]] = []
        var current: [String]?
        for line in readme[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current!.drop { $0.hasPrefix("import ") || $0.isEmpty }.map { $0 })
                current = nil
            } else {
                current?.append(String(line))
            }
        }
        return blocks
    }

    /// The regions of `ReadmeExamples.swift` between its markers, unindented, with the
    /// directory written as the README writes it.
    static func compiledBlocks() throws -> [[String]] {
        let source = try String(
            contentsOf: repository.appendingPathComponent("Tests/EventStoreTests/Documentation/ReadmeExamples.swift"),
            encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// README: begin" {
                current = []
            } else if trimmed == "// README: end" {
                blocks.append(current!)
                current = nil
            } else if current != nil {
                let text = line.hasPrefix("        ") ? String(line.dropFirst(8)) : String(line)
                current?.append(text.replacingOccurrences(of: "\"\\(directory)/", with: "\"/var/lib/myapp/"))
            }
        }
        return blocks
    }

    @Test func theQuickStartIsTheCodeThatIsCompiled() throws {
        let readme = try Self.readmeBlocks()
        let compiled = try Self.compiledBlocks()
        #expect(readme.count == 3, "the Quick start has three Swift blocks")
        #expect(compiled.count == readme.count, "one compiled region per block")
        for (index, (shown, built)) in zip(readme, compiled).enumerated() {
            #expect(
                shown == built,
                "README block \(index + 1) differs from ReadmeExamples: first at line \((Array(zip(shown, built)).firstIndex { $0 != $1 } ?? min(shown.count, built.count)) + 1)"
            )
        }
    }

    @Test func theQuickStartRuns() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await ReadmeExamples.basics(in: directory.appending("basics"))
        try await ReadmeExamples.queries(in: directory.appending("queries"))
        try await ReadmeExamples.schemas(in: directory.appending("schemas"))
    }
}
