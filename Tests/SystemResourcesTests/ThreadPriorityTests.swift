import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SystemResources

/// Threads started by ``DetachedThread`` run at the process's nice value plus their offset, not at
/// whatever their creator ran at: Dispatch sets its worker threads' nice values by quality of
/// service, and a server started from a Swift task used to hand that value to its event loops.
@Suite("Thread priority", .serialized)
struct ThreadPriorityTests {
    @Test func offsetsStayWithinTheNiceRange() {
        #expect(ThreadPriority.nice(base: 0, offset: 10) == 10)
        #expect(ThreadPriority.nice(base: -10, offset: 10) == 0)
        #expect(ThreadPriority.nice(base: 15, offset: 10) == 19)
        #expect(ThreadPriority.nice(base: -18, offset: -5) == -20)
    }

    /// Runs `body` on a `DetachedThread` started with `offset` and returns what it returned.
    static func onThread<T: Sendable>(offset: Int32, _ body: @escaping @Sendable () -> T) -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        DetachedThread.start(name: "priority-test", niceOffset: offset) {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + 30) == .success else { return nil }
        return result.withLock { $0 }
    }

    @Test func aThreadRunsAtTheProcessNiceValueWhateverItsCreatorRanAt() throws {
        let process = ThreadPriority.processNice
        // A creator on the other side of the process's value from where its child should land:
        // below it when there is room (raising it back is always allowed), else above.
        let creatorOffset: Int32 = process >= 10 ? -5 : 5
        let privileged = geteuid() == 0
        let seen = try #require(
            Self.onThread(offset: creatorOffset) {
                let creator = ThreadPriority.currentThreadNice
                let plain = Self.onThread(offset: 0) { ThreadPriority.currentThreadNice }
                let offset = Self.onThread(offset: 3) { ThreadPriority.currentThreadNice }
                return (creator, plain, offset)
            })
        // Without privilege a thread may not lower its nice value: it keeps its creator's.
        func allowed(_ target: Int32) -> Set<Int32> {
            privileged || target >= seen.0 ? [target] : [target, seen.0]
        }
        if privileged || creatorOffset > 0 {
            #expect(seen.0 == ThreadPriority.nice(base: process, offset: creatorOffset))
        }
        #expect(seen.1.map { allowed(process).contains($0) } == true, "\(seen), process \(process)")
        let withOffset = ThreadPriority.nice(base: process, offset: 3)
        #expect(seen.2.map { allowed(withOffset).contains($0) } == true, "\(seen), process \(process)")
        // The test's own thread is left as it was.
        #expect(ThreadPriority.processNice == process)
    }
}
