import Testing

@testable import EventStore

/// The field a key path names, found from its description once and then remembered.
struct ModelCodingFieldNameTests {
    struct Note {
        struct Reminder { var at: Int64 }
        var title: String
        var _draft: Bool
        var rank2: Int
        var reminder: Reminder?
        var tags: [String]
        var shout: String { title.uppercased() }
    }

    @Test func storedPropertiesNameTheirFields() {
        // Asked twice: the second answer comes from what the first remembered.
        for _ in 0..<2 {
            #expect(ModelCoding.fieldName(of: \Note.title) == "title")
            #expect(ModelCoding.fieldName(of: \Note._draft) == "_draft")
            #expect(ModelCoding.fieldName(of: \Note.rank2) == "rank2")
        }
    }

    @Test func otherPathsNameNoField() {
        for _ in 0..<2 {
            #expect(ModelCoding.fieldName(of: \Note.shout) == nil)
            #expect(ModelCoding.fieldName(of: \Note.reminder?.at) == nil)
            #expect(ModelCoding.fieldName(of: \Note.tags[0]) == nil)
            #expect(ModelCoding.fieldName(of: \Note.tags.count) == nil)
            #expect(ModelCoding.fieldName(of: \Note.self) == nil)
        }
    }

    /// Key paths of different models with the same property name are told apart.
    @Test func keyPathsOfDifferentRootsAreDifferentKeys() {
        struct Other { var label: String }
        #expect(ModelCoding.fieldName(of: \Other.label) == "label")
        #expect(ModelCoding.fieldName(of: \Note.title) == "title")
    }
}
