/// The searchable text of one item state: what ``SearchIndexWriter/document(of:terms:positions:)``
/// tokenizes, taken out of the state (``SearchIndexWriter/text(collection:state:)``) so that a
/// transaction's documents can be tokenized on another thread (``DocumentTokenizer``) while the
/// writer goes on with the next events.
struct DocumentText: Sendable {
    /// A searchable field's value (a string, or an array holding strings) and its weight.
    struct Field: Sendable {
        var weight: UInt32
        var value: Value
    }

    /// The searchable fields the state has, in the configuration's canonical order.
    var fields: [Field] = []
    /// The value of the tag field, if the state has one.
    var tags: Value?
}
