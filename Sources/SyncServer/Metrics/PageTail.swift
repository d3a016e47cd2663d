/// The `head` and `next` of a pull page's JSON body, read from its end without decoding its
/// events.
///
/// The page writer (`PullPage.jsonBytes`) puts them last, in this order:
/// `{…,"events":[…],"head":12,"next":10}`. With a store's seqs dense from 1, the page holds
/// `next − after` events.
struct PageTail: Hashable, Sendable {
    /// The store's head when the page was read.
    var head: UInt64
    /// The seq of the page's last event (the `after` asked for when the page is empty).
    var next: UInt64

    /// Reads the tail of `body`, or returns `nil` when it does not end the way a page does.
    init?(page body: [UInt8]) {
        var end = body.endIndex
        guard end > body.startIndex, body[end - 1] == UInt8(ascii: "}") else { return nil }
        end -= 1
        PageTail.skipSignature(before: &end, in: body)
        guard let next = PageTail.field("next", before: &end, in: body), end > body.startIndex,
            body[end - 1] == UInt8(ascii: ",")
        else { return nil }
        end -= 1
        guard let head = PageTail.field("head", before: &end, in: body) else { return nil }
        self.head = head
        self.next = next
    }

    /// The number of events of a page that starts after `after`.
    func events(after: UInt64) -> UInt64 {
        next > after ? next - after : 0
    }

    /// Moves `end` to the start of `,"signature":"HEX"` when the bytes before it are one (the
    /// page's last member, after `next`, when the server signs its marks).
    private static func skipSignature(before end: inout Int, in body: [UInt8]) {
        let name = Array(#","signature":""#.utf8)
        let length = name.count + 16 + 1
        guard end - body.startIndex >= length, body[end - 1] == UInt8(ascii: "\""),
            body[(end - length)..<(end - 17)].elementsEqual(name)
        else { return }
        end -= length
    }

    /// Reads `"key":DIGITS` ending at `end`, and moves `end` to its start.
    private static func field(_ key: String, before end: inout Int, in body: [UInt8]) -> UInt64? {
        var start = end
        while start > body.startIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(body[start - 1]) { start -= 1 }
        guard start < end, let value = UInt64(String(decoding: body[start..<end], as: UTF8.self)) else { return nil }
        let name = Array("\"\(key)\":".utf8)
        guard start - body.startIndex >= name.count, body[(start - name.count)..<start].elementsEqual(name) else {
            return nil
        }
        end = start - name.count
        return value
    }
}
