/// A page of items from ``StoreReader/items(in:after:limit:)``.
public struct ItemPage: Sendable, Hashable {
    /// The items, in id order (by UTF-8 bytes).
    public var items: [Item]
    /// The cursor for the next page, or `nil` after the last page.
    public var next: String?
}
