/// A point in a store's history to replay to.
public enum ReplayPoint: Sendable, Hashable, CustomStringConvertible {
    /// Every event with a log seq at or below this one.
    case seq(UInt64)
    /// Every event stamped at or before this clock value, whatever its log position. Since the
    /// merge depends only on the set of events, this is the state a replica would have held had it
    /// received exactly those events.
    case hlc(HLCTimestamp)

    /// Whether `event` belongs to the history up to this point.
    func includes(_ event: Event) -> Bool {
        switch self {
        case .seq(let seq): event.seq <= seq
        case .hlc(let hlc): event.hlc <= hlc
        }
    }

    /// `seq N` or `hlc T`.
    public var description: String {
        switch self {
        case .seq(let seq): "seq \(seq)"
        case .hlc(let hlc): "hlc \(hlc)"
        }
    }
}
