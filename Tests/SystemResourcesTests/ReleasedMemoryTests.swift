import FlipbookTestSupport
import Synchronization
import Testing

@testable import SystemResources

/// The one rule for handing freed memory back: after every `thresholdBytes` freed, at most every
/// `minimumInterval`, once per crossing whoever frees.
@Suite struct ReleasedMemoryTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    static func rule(_ clock: ManualClock) -> ReleasedMemory.Rule {
        ReleasedMemory.Rule(
            thresholdBytes: 1 << 20, minimumInterval: .milliseconds(20),
            clock: clock)
    }

    @Test func dueOnceAMiBWasFreedAndNotTooSoonAfterTheLastReturn() {
        let clock = ManualClock()
        let rule = Self.rule(clock)
        #expect(!rule.noteIsDue(600 << 10))
        #expect(rule.noteIsDue(600 << 10))  // 1.2 MiB: due
        #expect(!rule.noteIsDue(2 << 20))  // 2 MiB more, but within 20 ms of that return
        clock.advance(by: 0.025)
        #expect(rule.noteIsDue(0))  // what was counted meanwhile is due now
        #expect(!rule.noteIsDue(100))  // counted afresh after the return
        clock.advance(by: 0.025)
        #expect(!rule.noteIsDue(100))  // time alone is not enough
        rule.markReturned()  // a purge returned everything
        #expect(!rule.noteIsDue((1 << 20) - 1))
        clock.advance(by: 0.025)
        #expect(rule.noteIsDue(1))
    }

    @Test func concurrentFreersGetOneReturnPerCrossing() async {
        let clock = ManualClock()
        clock.advance(by: 1)
        let rule = Self.rule(clock)
        let dues = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { [rule, dues] in
                    for _ in 0..<64 where rule.noteIsDue(4 << 10) { dues.value.add(1, ordering: .relaxed) }
                }
            }
        }
        // 2 MiB freed in all, the clock standing still: exactly one caller returns it.
        #expect(dues.value.load(ordering: .relaxed) == 1)
    }
}
