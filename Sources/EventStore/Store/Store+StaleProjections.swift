import LMDB

extension Store {
    /// Marks the recorded custom projections this open does not run stale, in `tx`: a commit
    /// that changes the log or rebuilds the projections, which they then no longer follow. The
    /// next open that registers one rebuilds (see ``ProjectionRecord/isStale``). An open that
    /// only reads or declares an index changes nothing of them.
    func markUnregisteredProjectionsStale(_ tx: WriteTransaction) throws {
        guard !unregisteredProjections.isEmpty, var record = try Meta.configurationRecord(tx, schema.meta) else {
            return
        }
        var changed = false
        for index in record.projections.indices
        where unregisteredProjections.contains(record.projections[index].name) && !record.projections[index].isStale {
            record.projections[index].isStale = true
            changed = true
        }
        if changed { try Meta.setConfigurationRecord(tx, schema.meta, record) }
    }
}
