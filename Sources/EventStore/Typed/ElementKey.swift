/// The coding key of an array element, as `JSONEncoder` and `JSONDecoder` name it (`Index 2`),
/// for the coding paths of ``ModelEncoder`` and ``ModelDecoder``.
struct ElementKey: CodingKey {
    let index: Int
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
    init(index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
}
