import NIOHTTP1
import SyncTestSupport
import Testing

/// One scrape of `GET /metrics`: the samples of the Prometheus text format, by name and labels.
struct MetricsScrape: Sendable {
    /// A sample line: `name{label="value",…} value`.
    struct Sample: Sendable, Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// The samples, in the order of the text.
    var samples: [Sample] = []

    /// Parses the text format; comment lines (`# HELP`, `# TYPE`) and blank lines are skipped.
    init(text: String) throws {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            samples.append(try MetricsScrape.sample(Substring(line)))
        }
    }

    /// The value of the sample with exactly these labels; 0 when there is none (a counter or a
    /// histogram series that nothing has touched yet).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.first { $0.name == name && $0.labels == labels }?.value ?? 0
    }

    /// How much the sample grew since `earlier`.
    func delta(_ name: String, _ labels: [String: String] = [:], since earlier: MetricsScrape) -> Double {
        value(name, labels) - earlier.value(name, labels)
    }

    /// The values a label takes among the samples of `name`.
    func labelValues(_ label: String, of name: String) -> Set<String> {
        Set(samples.filter { $0.name == name }.compactMap { $0.labels[label] })
    }

    struct SyntaxError: Error, CustomStringConvertible {
        var line: String
        var description: String { "not a sample line: \(line)" }
    }

    /// Parses `name{label="value",…} value [timestamp]`; label values may hold `{`, `}`, `,` and
    /// the escapes `\\`, `\"` and `\n`.
    private static func sample(_ line: Substring) throws -> Sample {
        var rest = line[...]
        let name = String(rest.prefix { $0 != "{" && $0 != " " })
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let key = String(rest.prefix { $0 != "=" })
                rest = rest.dropFirst(key.count)
                guard rest.hasPrefix("=\"") else { throw SyntaxError(line: String(line)) }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    guard character == "\\", let escaped = rest.first else {
                        value.append(character)
                        continue
                    }
                    rest = rest.dropFirst()
                    value.append(escaped == "n" ? "\n" : escaped)
                }
                guard rest.first == "\"" else { throw SyntaxError(line: String(line)) }
                rest = rest.dropFirst()
                labels[key] = value
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard !name.isEmpty, let text = fields.first, let value = Double(text)
        else { throw SyntaxError(line: String(line)) }
        return Sample(name: name, labels: labels, value: value)
    }
}

extension ServerFixture {
    /// Scrapes `GET /metrics` (with `token`, when the server needs one).
    func scrape(token: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> MetricsScrape {
        let reply = try await send(.GET, "/metrics", token: token)
        #expect(reply.status == 200, "\(reply.text)", sourceLocation: sourceLocation)
        return try MetricsScrape(text: reply.text)
    }
}
