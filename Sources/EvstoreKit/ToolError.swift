import EventStore

/// A failure the tool reports as one clear line, with its exit status.
package struct ToolError: Error, CustomStringConvertible, Sendable {
    /// The line to print.
    package var message: String
    /// The process exit status: 1 for a failed check or operation, 64 for a usage error.
    package var exitCode: Int32

    /// Creates an error.
    package init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A usage error (exit status 64).
    package static func usage(_ message: String) -> ToolError { ToolError(message, exitCode: 64) }

    /// The message.
    package var description: String { message }

    /// Turns any error into one line for people.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? ToolError { return error.message }
        if let error = error as? EventStoreError {
            if error.code == .corrupt {
                return
                    "\(error.message): the store looks damaged (`evstore verify` names what; `evstore rebuild` rebuilds the projections from the log)"
            }
            return error.message
        }
        return "\(error)"
    }
}
