import FlipbookTestSupport
import Foundation
import Testing

@testable import SystemResources

/// The lock and thread starter the service uses instead of Foundation's NSCondition and Thread.
@Suite(.ownThreads) struct ConditionLockTests {
    @Test func aTimedWaitWithoutASignalRunsOut() {
        let lock = ConditionLock()
        let started = Date()
        lock.lock()
        let signalled = lock.wait(seconds: 0.05)
        lock.unlock()
        #expect(!signalled)
        #expect(Date().timeIntervalSince(started) >= 0.05)
    }

    @Test func aNamedThreadRunsAndIsWokenBySignal() {
        final class Shared: @unchecked Sendable {
            let lock = ConditionLock()
            var name = ""
            var done = false
        }
        let shared = Shared()
        DetachedThread.start(name: "flipbook-test-thread-name") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            shared.lock.withLock {
                shared.name = comm.trimmingCharacters(in: .newlines)
                shared.done = true
                shared.lock.signal()
            }
        }
        shared.lock.lock()
        while !shared.done { #expect(shared.lock.wait(seconds: 30)) }
        shared.lock.unlock()
        #expect(shared.name == "flipbook-test-t")  // the kernel keeps 15 bytes
    }
}
