import LMDB

extension Meta {
    /// The store's ``ConfigurationRecord`` (see ``ConfigurationRecord/encoded()``).
    static let configuration = "store.configuration"

    /// The recorded configuration, or `nil` for a store made before records existed.
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` (or ``EventStoreError/Code/unsupportedFormat``)
    ///   when the record cannot be decoded.
    static func configurationRecord(_ tx: ReadTransaction, _ db: Database) throws -> ConfigurationRecord? {
        try tx.value(forKey: Array(configuration.utf8), in: db).map { try ConfigurationRecord(decoding: $0) }
    }

    /// Writes `record` when its bytes differ from the stored ones.
    static func setConfigurationRecord(_ tx: WriteTransaction, _ db: Database, _ record: ConfigurationRecord) throws {
        let key = Array(configuration.utf8)
        let bytes = record.encoded()
        if try tx.value(forKey: key, in: db) != bytes { try tx.put(bytes, forKey: key, in: db) }
    }
}
