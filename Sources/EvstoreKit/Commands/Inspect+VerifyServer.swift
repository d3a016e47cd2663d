import EventStore
import EventSync

extension Inspect {
    /// What `evstore verify NAME --postgres URL` found in a server store's log.
    package struct ServerLogVerification: Sendable {
        /// The events read.
        package var events = 0
        /// The pages read.
        package var pages = 0
        /// What is wrong, in words (empty when the log is sound).
        package var problems: [String] = []

        /// Whether the log is sound.
        package var isConsistent: Bool { problems.isEmpty }
    }

    /// Reads a server store's whole log through the protocol and checks it as a client would, and
    /// more: seqs dense from 1 with no event twice, every page's checksum, and the log digest the
    /// server reports at the end of every page against the digest the events themselves give.
    ///
    /// - Throws: ``ToolError`` when the store cannot be read.
    package static func verify(server: ServerStoreAccess) async throws -> ServerLogVerification {
        var result = ServerLogVerification()
        var digest = LogDigest.empty
        var next: UInt64 = 1
        var ids: Set<EventID> = []
        try await server.forEachPage { page in
            result.pages += 1
            if page.checksum != PageChecksum(events: page.events) {
                result.problems.append("the page after seq \(next - 1) does not match its checksum")
            }
            for event in page.events {
                if event.seq != next { result.problems.append("seq \(event.seq) where \(next) was expected") }
                if !ids.insert(event.id).inserted { result.problems.append("event \(event.id) is in the log twice") }
                next = event.seq + 1
                digest = digest.appending(event)
                result.events += 1
            }
            if page.digest != digest {
                result.problems.append(
                    "the log digest at seq \(page.next) is \(page.digest) on the server, \(digest) from the events")
            }
            return result.problems.count < 100
        }
        let info = try await server.info()
        if result.problems.isEmpty && info.head != next - 1 {
            result.problems.append("the head is \(info.head), but the log ends at seq \(next - 1)")
        }
        return result
    }

    /// Prints a ``ServerLogVerification``; returns whether the log is sound.
    package static func printServerVerification(
        _ verification: ServerLogVerification, format: OutputFormat, output: Output
    ) -> Bool {
        switch format {
        case .jsonl:
            for problem in verification.problems { output.line(Rendering.jsonLine(["problem": .string(problem)])) }
            output.line(
                Rendering.jsonLine([
                    "consistent": .bool(verification.isConsistent), "events": .int(Int64(verification.events)),
                    "pages": .int(Int64(verification.pages)), "problems": .int(Int64(verification.problems.count)),
                ]))
        case .table:
            for problem in verification.problems { output.line("problem: \(problem)") }
            output.line(
                verification.isConsistent
                    ? "consistent: \(verification.events) events in \(verification.pages) pages; seqs dense, "
                        + "page checksums and log digests match"
                    : "NOT consistent: \(verification.problems.count) problems in \(verification.events) events")
        }
        return verification.isConsistent
    }
}
