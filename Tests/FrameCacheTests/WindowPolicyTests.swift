import FlipbookTestSupport
import Testing

@testable import FrameCache

/// The allocation of one budget over many active images: lookaheads first, then whole
/// animations where they save the most decoding, then deeper windows.
@Suite("Window policy")
struct WindowPolicyTests {
    typealias Demand = WindowPolicy.Demand

    /// `frames` frames of `pngBytes` each, `delayMs` apart, on a canvas too large for the
    /// FLAnimatedImage "small" rule unless `decoded` says otherwise.
    func demand(
        _ frames: Int, png pngBytes: Int, delay delayMs: Int, decoded: Int = 1_000_000,
        wasWhole: Bool = false
    ) -> Demand {
        Demand(
            frameCount: frames, decodedFrameBytes: decoded, encodedFrameBytes: pngBytes,
            loopMs: frames * delayMs, wasWhole: wasWhole)
    }

    func bytes(_ windows: [Int], _ demands: [Demand]) -> Int {
        zip(windows, demands).reduce(0) { $0 + $1.0 * $1.1.encodedFrameBytes }
    }

    @Test func aSmallAnimationWithRoomIsWhole() {
        let policy = WindowPolicy()
        #expect(policy.windows(for: [demand(10, png: 10_000, delay: 100, decoded: 100_000)], budget: 1 << 30, cap: nil) == [10])
    }

    @Test func lookaheadCoversHalfASecondOfPlayback() {
        let policy = WindowPolicy(lookaheadMs: 500)
        #expect(policy.lookahead(of: demand(300, png: 1, delay: 40)) == 13)
        #expect(policy.lookahead(of: demand(300, png: 1, delay: 100)) == 5)
        // Slow animations still get the minimum.
        #expect(policy.lookahead(of: demand(300, png: 1, delay: 2000)) == 2)
        // Never more than the animation.
        #expect(policy.lookahead(of: demand(3, png: 1, delay: 40)) == 3)
    }

    @Test func exactlyTheLookaheadsWhenThatIsAllThatFits() {
        let policy = WindowPolicy(lookaheadMs: 500)
        let demands = [demand(300, png: 100_000, delay: 40), demand(300, png: 100_000, delay: 40)]
        #expect(policy.windows(for: demands, budget: 2_600_000, cap: nil) == [13, 13])
    }

    @Test func lookaheadsShrinkInProportionButNotBelowTheMinimum() {
        let policy = WindowPolicy(minimumWindow: 2, lookaheadMs: 500)
        let demands = [demand(300, png: 100_000, delay: 40), demand(300, png: 100_000, delay: 100)]
        // Lookaheads 13 + 5 frames = 1.8 MB; half of that fits.
        #expect(policy.windows(for: demands, budget: 900_000, cap: nil) == [6, 2])
        #expect(policy.windows(for: demands, budget: 0, cap: nil) == [2, 2])
    }

    @Test func wholeAnimationsGoWhereTheySaveTheMostDecodingPerByte() {
        let policy = WindowPolicy(lookaheadMs: 500)
        // A: 20 frames of 10 KB at 100 ms (10 decodes/s for 150 KB more than its lookahead).
        // B: 100 frames of 50 KB at 40 ms (25 decodes/s for 4.35 MB more).
        let a = demand(20, png: 10_000, delay: 100)
        let b = demand(100, png: 50_000, delay: 40)
        let lookaheads = 5 * 10_000 + 13 * 50_000
        let windows = policy.windows(for: [b, a], budget: lookaheads + 200_000, cap: nil)
        #expect(windows[1] == 20)
        // What is left (50 KB) deepens B by one frame.
        #expect(windows[0] == 14)
        #expect(bytes(windows, [b, a]) <= lookaheads + 200_000)
    }

    @Test func smallAnimationsComeFirstAndWholeOnesKeepTheirPlace() {
        let policy = WindowPolicy(wholeAnimationBytes: 10_000_000, lookaheadMs: 500)
        // Same cost, same saving; only one fits beyond the lookaheads.
        let big = demand(40, png: 10_000, delay: 50, decoded: 1_000_000)
        let small = demand(40, png: 10_000, delay: 50, decoded: 100_000)
        let budget = 2 * 10 * 10_000 + 30 * 10_000
        #expect(policy.windows(for: [big, small], budget: budget, cap: nil) == [10, 40])
        var wasWhole = big
        wasWhole.wasWhole = true
        #expect(policy.windows(for: [wasWhole, small], budget: budget, cap: nil) == [40, 10])
    }

    @Test func theCapApplies() {
        let policy = WindowPolicy()
        let demands = [demand(10, png: 10_000, delay: 100, decoded: 100_000), demand(300, png: 100_000, delay: 40)]
        #expect(policy.windows(for: demands, budget: 1 << 30, cap: 1) == [1, 1])
        #expect(policy.windows(for: demands, budget: 1 << 30, cap: 2) == [2, 2])
    }

    @Test func windowsStayInsideTheBudgetWheneverTheLookaheadsFit() {
        var generator = SplitMix64(seed: 7)
        let policy = WindowPolicy(lookaheadMs: 500)
        for _ in 0..<500 {
            let demands = (0..<Int.random(in: 1...60, using: &generator)).map { _ in
                demand(
                    Int.random(in: 1...300, using: &generator), png: Int.random(in: 1_000...200_000, using: &generator),
                    delay: Int.random(in: 20...200, using: &generator),
                    decoded: Int.random(in: 10_000...4_000_000, using: &generator),
                    wasWhole: Bool.random(using: &generator))
            }
            let lookaheads = demands.reduce(0) { $0 + policy.lookahead(of: $1) * $1.encodedFrameBytes }
            let budget = Int.random(in: lookaheads...(lookaheads * 4 + 1), using: &generator)
            let windows = policy.windows(for: demands, budget: budget, cap: nil)
            #expect(bytes(windows, demands) <= budget)
            for (window, demand) in zip(windows, demands) {
                #expect(window >= policy.lookahead(of: demand) && window <= demand.frameCount)
            }
        }
    }
}
