import Dispatch
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

@testable import SystemResources

/// The worker pool the service runs ingest commits, storage lookups and derived builds on: every
/// job runs, at most `limit` at once, on threads started when needed that end when idle; a
/// parallel loop finishes on the caller's thread when every worker is busy.
@Suite struct WorkerThreadsTests {
    /// Jobs that overlap: how many ran at once at most, and which ran.
    final class Tally: Sendable {
        let state = Mutex((now: 0, most: 0, ran: [Int]()))
        let done = DispatchSemaphore(value: 0)

        /// Counts the job in, holds it `seconds` (first, with `until`, until that many run, for
        /// at most 30 s), counts it out.
        func run(_ n: Int, holding seconds: Double, until running: Int = 0) {
            state.withLock {
                $0.now += 1; $0.most = max($0.most, $0.now)
            }
            for _ in 0..<3000 where state.withLock({ $0.now }) < running { usleep(10_000) }
            usleep(UInt32(seconds * 1e6))
            state.withLock {
                $0.now -= 1; $0.ran.append(n)
            }
            done.signal()
        }
    }

    @Test func everyJobRunsOnAtMostTheLimitsThreads() throws {
        let workers = WorkerThreads(name: "test-workers", limit: 3)
        let tally = Tally()
        // The first three wait (up to 30 s) until three run at once: the pool must start that
        // many, and no more run beside them.
        for n in 0..<3 { workers.submit { tally.run(n, holding: 0, until: 3) } }
        for n in 3..<24 { workers.submit { tally.run(n, holding: 0.01) } }
        #expect(workers.threadCount <= 3)
        for _ in 0..<24 { try #require(tally.done.wait(timeout: .now() + 60) == .success, "a job never ran") }
        let (most, ran) = tally.state.withLock { ($0.most, $0.ran) }
        #expect(most == 3, "three at once, never more")
        #expect(ran.sorted() == Array(0..<24))
        workers.close()
    }

    @Test func idleThreadsEndAndNewJobsStartThemAgain() async throws {
        let workers = WorkerThreads(name: "test-idle", limit: 2, idleSeconds: 0.05)
        let tally = Tally()
        for n in 0..<2 { workers.submit { tally.run(n, holding: 0.05) } }
        for _ in 0..<2 { try #require(tally.done.wait(timeout: .now() + 60) == .success) }
        for _ in 0..<1000 where workers.threadCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(workers.threadCount == 0, "idle threads ended")
        workers.submit { tally.run(2, holding: 0) }
        try #require(tally.done.wait(timeout: .now() + 60) == .success, "a job after the threads ended ran")
        workers.close()
    }

    @Test func aParallelLoopRunsEachIndexOnceWhileEveryWorkerIsBusy() throws {
        let workers = WorkerThreads(name: "test-loop", limit: 2)
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            workers.submit {
                holding.signal()
                release.wait()
            }
        }
        for _ in 0..<2 { try #require(holding.wait(timeout: .now() + 60) == .success) }
        let seen = Mutex([Int](repeating: 0, count: 50))
        workers.perform(iterations: 50) { i in seen.withLock { $0[i] += 1 } }
        #expect(seen.withLock { $0 } == [Int](repeating: 1, count: 50), "each index ran once, on the caller's thread")
        release.signal()
        release.signal()
        workers.perform(iterations: 0) { _ in Issue.record("no iteration to run") }
        workers.close()
    }

    @Test func aClosedPoolTakesNoMoreJobs() throws {
        let workers = WorkerThreads(name: "test-closed", limit: 1)
        let tally = Tally()
        workers.submit { tally.run(0, holding: 0) }
        try #require(tally.done.wait(timeout: .now() + 60) == .success)
        workers.close()
        workers.submit { tally.run(1, holding: 0) }
        #expect(tally.done.wait(timeout: .now() + 0.2) == .timedOut)
        #expect(tally.state.withLock { $0.ran } == [0])
    }
}

/// `.ownThreads` (FlipbookTestSupport) runs a suite's tests on the worker pool's threads, not the
/// cooperative pool's, before and after an `await`.
@Suite(.ownThreads) struct OwnThreadsTests {
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .newlines)
    }

    @Test func aTestRunsOnAThreadOfItsOwnAcrossAwaits() async throws {
        #expect(Self.threadName() == "test-body")
        try await Task.sleep(for: .milliseconds(10))
        #expect(Self.threadName() == "test-body")
        async let child = Self.threadName()
        #expect(await child == "test-body", "child tasks inherit the threads")
    }
}
