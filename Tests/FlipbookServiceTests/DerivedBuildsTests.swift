import Dispatch
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

@testable import FlipbookService

/// Builds past the concurrency limit wait in line without holding a thread, and all run, each
/// key once (coalescing).
@Suite("Derived builds", .ownThreads)
struct DerivedBuildsTests {
    @Test func buildsPastTheLimitWaitInLineAndAllRun() async {
        // In a process of its own: on the old design the waiting builds held the shared pool.
        await #expect(processExitsWith: .success) {
            do { try DerivedBuildsTests.buildsWaitWithoutAThread() } catch { Issue.record(error) }
        }
    }

    static func buildsWaitWithoutAThread() throws {
        let builds = DerivedBuilds(concurrency: 2)
        let gate = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        let running = Mutex((now: 0, most: 0))
        let ran = Mutex<[Int]>([])
        let count = 40
        for n in 0..<count {
            let work: DerivedBuilds.Work = {
                running.withLock { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
                if n < 2 {  // the first two hold their slots until let go
                    holding.signal()
                    gate.wait()
                }
                running.withLock { $0.now -= 1 }
                ran.withLock { $0.append(n) }
                return .success(())
            }
            builds.run("key-\(n)", work: work) { _ in answered.signal() }
        }
        builds.run("key-39", work: { .failure(.busy) }) { _ in answered.signal() }  // joins key-39's build
        // Both slots held (a loaded machine may not have started the first two yet; let go
        // before they wait, they would not overlap and the most running would read 1).
        for _ in 0..<2 {
            guard holding.wait(timeout: .now() + 20) == .success else { throw TestFailure("a build never started") }
        }
        // The 38 builds in line hold no thread of the shared pool: an item queued there runs.
        let probe = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { probe.signal() }
        #expect(probe.wait(timeout: .now() + 5) == .success, "a build waiting for a slot holds a thread of the pool")
        gate.signal()
        gate.signal()
        for _ in 0...count {
            guard answered.wait(timeout: .now() + 20) == .success else { throw TestFailure("a build never ran") }
        }
        #expect(running.withLock { $0.most } == 2)
        #expect(ran.withLock { $0.sorted() } == Array(0..<count), "every build ran, once")
        #expect(builds.counts() == (started: count, coalesced: 1))
    }
}
