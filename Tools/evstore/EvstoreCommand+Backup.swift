import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a compacted, consistent copy of a live store.",
            discussion: """
                Copies one read snapshot, so applications may keep writing meanwhile; free pages \
                are left out. The destination must be a new or empty directory; the copy is an \
                ordinary store.

                The copy keeps the store's replica id. Put back in place of the store (a device \
                restored from a backup) or opened on a second device, it finds out on its next \
                sync that it reused ids it had published: the writes made since move to a new \
                replica id and are pushed, and what the copy lacks comes back from the server. \
                Nothing that had synced is lost; writes made after the backup that never left \
                the device before it was restored are gone with it.

                Example:
                  evstore backup ./store ./backups/2026-11-22
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The destination: a new or empty directory.") var destination: String

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let head = try store.head()
                try store.backup(to: destination)
                print("backed up \(head) events to \(destination)")
            }
        }
    }
}
