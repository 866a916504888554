import AnimatedImage
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

@testable import FrameCache

/// The decode-memory budget: reservations within it are made at once; one it cannot hold waits,
/// in arrival order, and is made when enough is given back; one larger than the whole budget, or
/// one more than the waiting limit, is refused. The frame cache's decode threads reserve from it,
/// so a third concurrent decode of a 49 MP frame waits for one of the first two.
@Suite(.ownThreads) struct DecodeMemoryBudgetTests {
    /// Runs `body` on a thread of its own (the budget blocks its caller).
    final class Background: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let result = Mutex<Result<DecodeReservation, DecodeMemoryBudget.Refusal>?>(nil)

        init(_ body: @escaping @Sendable () -> Result<DecodeReservation, DecodeMemoryBudget.Refusal>) {
            Thread { [self] in
                let outcome = body()
                result.withLock { $0 = outcome }
                done.signal()
            }.start()
        }

        /// The outcome, waiting at most `seconds` for it.
        func outcome(within seconds: Double) -> Result<DecodeReservation, DecodeMemoryBudget.Refusal>? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            return result.withLock { $0 }
        }

        var isFinished: Bool {
            result.withLock { $0 != nil }
        }
    }

    static func reserve(_ budget: DecodeMemoryBudget, _ bytes: Int) -> Background {
        Background { Result { () throws(DecodeMemoryBudget.Refusal) -> DecodeReservation in try budget.reserve(bytes) } }
    }

    /// Polls until `condition` holds (bounding a wait, not timing anything).
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    @Test func reservationsWithinTheBudgetAreMadeAtOnceAndGivenBack() throws {
        let budget = DecodeMemoryBudget(capacityBytes: 100)
        let a = try budget.reserve(60)
        let b = try budget.reserve(40)
        #expect(budget.stats().usedBytes == 100 && budget.stats().waits == 0)
        a.release()
        a.release()  // once only
        #expect(budget.stats().usedBytes == 40)
        b.release()
        #expect(
            budget.stats()
                == .init(
                    capacityBytes: 100, usedBytes: 0, peakBytes: 100, waiting: 0, reservations: 2,
                    waits: 0, refusedQueueFull: 0, refusedTooLarge: 0))
    }

    @Test func aReservationThatDoesNotFitWaitsUntilEnoughIsGivenBack() throws {
        let budget = DecodeMemoryBudget(capacityBytes: 100)
        let first = try budget.reserve(70)
        let second = Self.reserve(budget, 50)
        #expect(Self.eventually { budget.stats().waiting == 1 })
        #expect(!second.isFinished)
        first.release()
        let made = try #require(second.outcome(within: 20)).get()
        #expect(made.bytes == 50)
        let stats = budget.stats()
        #expect(stats.usedBytes == 50 && stats.waits == 1 && stats.peakBytes == 70 && stats.waiting == 0)
    }

    @Test func waitingReservationsAreMadeInArrivalOrder() throws {
        let budget = DecodeMemoryBudget(capacityBytes: 100)
        let held = try budget.reserve(90)
        let large = Self.reserve(budget, 80)
        #expect(Self.eventually { budget.stats().waiting == 1 })
        // 10 bytes are free and a 10-byte reservation would fit, but the 80 came first.
        let small = Self.reserve(budget, 10)
        #expect(Self.eventually { budget.stats().waiting == 2 })
        #expect(!small.isFinished)
        held.release()
        let largeMade = try #require(large.outcome(within: 20)).get()
        let smallMade = try #require(small.outcome(within: 20)).get()
        #expect(budget.stats().usedBytes == 90)
        largeMade.release()
        smallMade.release()
    }

    @Test func whatCanNeverFitAndWhatWouldWaitTooLongAreRefused() throws {
        let budget = DecodeMemoryBudget(capacityBytes: 100, maxWaiting: 1)
        #expect(throws: DecodeMemoryBudget.Refusal.tooLarge(needed: 101, capacity: 100)) { try budget.reserve(101) }
        let held = try budget.reserve(100)
        let waiting = Self.reserve(budget, 1)
        #expect(Self.eventually { budget.stats().waiting == 1 })
        #expect(throws: DecodeMemoryBudget.Refusal.queueFull) { try budget.reserve(1) }
        budget.close()
        if case .failure(let refusal)? = waiting.outcome(within: 20) {
            #expect(refusal == .closed)
        } else {
            Issue.record("a waiting reservation outlived close()")
        }
        held.release()
        let stats = budget.stats()
        #expect(stats.refusedTooLarge == 1 && stats.refusedQueueFull == 1 && stats.usedBytes == 0)
    }

    /// A one-frame GIF of `side`×`side` pixels of palette entry `color`: LZW codes that spell runs
    /// of 1, 2, 3, … pixels (the table cleared when full), so 49 MP take a few tens of kilobytes.
    static func uniformGIF(side: Int, color: UInt8) -> [UInt8] {
        var out: [UInt8] = Array("GIF89a".utf8)
        out += [UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8), 0xF1, 0, 0]
        out += [0, 0, 0, 250, 120, 20, 20, 120, 250, 90, 90, 90]  // the 4-entry global colour table (flags 0xF1)
        out += [0x2C, 0, 0, 0, 0, UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8), 0, 8]
        var data: [UInt8] = []
        var accumulator = 0
        var bits = 0
        func put(_ code: Int, _ width: Int) {
            accumulator |= code << bits
            bits += width
            while bits >= 8 {
                data.append(UInt8(accumulator & 0xFF))
                accumulator >>= 8
                bits -= 8
            }
        }
        var left = side * side
        var width = 9
        while left > 0 {
            put(256, width)  // at the width the table had grown to
            width = 9
            var next = 258
            put(Int(color), width)
            left -= 1
            var run = 2
            while left > 0 && next < 4095 {
                if run > left {
                    put(Int(color), width)
                    left -= 1
                } else {
                    put(next, width)
                    left -= run
                    run += 1
                }
                next += 1
                if next == 1 << width && width < 12 { width += 1 }
            }
        }
        put(257, width)
        if bits > 0 { data.append(UInt8(accumulator & 0xFF)) }
        var offset = 0
        while offset < data.count {
            let n = min(255, data.count - offset)
            out.append(UInt8(n))
            out += data[offset..<offset + n]
            offset += n
        }
        out += [0, 0x3B]
        return out
    }

    @Test func aThirdConcurrentDecodeOfA49MPFrameWaitsThenSucceeds() throws {
        let images = try (0..<3).map { n in
            try AnimatedImage(bytes: Self.uniformGIF(side: 7000, color: UInt8(n)), verification: .structural)
        }
        let job = images[0].decodeMemory.coldRenderBytes
        #expect(job > 49_000_000 * 4)  // a canvas and more
        // Room for two renders from cold (no checkpoints, no resume), not three.
        let budget = DecodeMemoryBudget(capacityBytes: 2 * job + job / 2)
        // Four threads: large jobs take all but one (the lane kept for small frames), so three
        // may run at once and only the budget holds the third back.
        var configuration = FrameCacheConfiguration(
            budgetBytes: 64 << 20, decodeThreads: 4,
            window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 1))
        configuration.decodeBudget = budget
        let cache = FrameCache(configuration: configuration)
        defer { cache.shutdown() }
        let results = (0..<3).map { _ in Results() }
        for (n, image) in images.enumerated() {
            #expect(
                cache.frame(
                    CacheableImage(id: "big\(n)", image: image), index: 0,
                    completion: results[n].completion) == nil)
        }
        for result in results {
            let values = result.wait(for: 1, timeout: 600)
            let png = try #require(values.first).get().png
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        }
        // A frame is answered as soon as it is encoded; the job gives its reservation back after.
        cache.waitUntilIdle()
        let stats = budget.stats()
        #expect(stats.waits >= 1, "the third decode did not wait: \(stats)")
        #expect(stats.peakBytes <= budget.capacityBytes)
        #expect(stats.peakBytes >= 2 * job)  // two ran at once
        #expect(stats.usedBytes == 0)
        #expect(cache.stats().decodeMemory == stats)
    }
}
