import Synchronization
import Testing

@testable import EventSync

struct PageQueueTests {
    @Test func elementsComeOutInOrderAndThePutterWaitsWhileTheQueueIsFull() async throws {
        let queue = PageQueue<Int>(limit: 10)
        let put = Mutex(0)
        let putter = Task {
            for value in 0..<100 {
                guard await queue.put(value, bytes: 4) else { return }
                put.withLock { $0 = value + 1 }
            }
            queue.close()
        }
        // 4 + 4 + 4 bytes: the third element takes the queue over its limit, the fourth waits.
        while put.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(1)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(put.withLock { $0 } == 3)
        var taken: [Int] = []
        while let value = await queue.take() { taken.append(value) }
        #expect(taken == Array(0..<100))
        await putter.value
    }

    @Test func aTakenElementIsNotKeptWhileOthersWait() async {
        final class Page: Sendable {}
        let queue = PageQueue<Page>(limit: 100)
        weak var first: Page?
        do {
            let page = Page()
            first = page
            #expect(await queue.put(page, bytes: 1))
        }
        #expect(await queue.put(Page(), bytes: 1))
        _ = await queue.take()
        #expect(first == nil, "the queue still holds a page it handed out")
        #expect(await queue.take() != nil)
    }

    @Test func closingEndsBothSidesWaits() async {
        let queue = PageQueue<Int>(limit: 1)
        #expect(await queue.put(1, bytes: 1))
        let putter = Task { await queue.put(2, bytes: 1) }
        let empty = PageQueue<Int>(limit: 1)
        let taker = Task { await empty.take() }
        try? await Task.sleep(for: .milliseconds(20))
        queue.close()
        empty.close()
        #expect(await putter.value == false, "a put into a closed queue adds nothing")
        #expect(await taker.value == nil)
        #expect(await queue.take() == 1, "what was queued before the close can still be taken")
        #expect(await queue.take() == nil)
    }

    @Test func cancellingEndsAWaitAndAPutWakesAWaitingTaker() async {
        let full = PageQueue<Int>(limit: 1)
        #expect(await full.put(1, bytes: 1))
        let putter = Task { await full.put(2, bytes: 1) }
        let waiting = Task { await PageQueue<Int>(limit: 1).take() }
        try? await Task.sleep(for: .milliseconds(20))
        putter.cancel()
        waiting.cancel()
        #expect(await putter.value == false)
        #expect(await waiting.value == nil)

        let queue = PageQueue<Int>(limit: 1)
        let taker = Task { await queue.take() }
        try? await Task.sleep(for: .milliseconds(20))
        #expect(await queue.put(7, bytes: 1))
        #expect(await taker.value == 7)
    }
}
