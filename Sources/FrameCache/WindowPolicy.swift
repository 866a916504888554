/// How many frames of each active image the cache keeps and decodes ahead: FLAnimatedImage's
/// rule carried to a server where many images share one budget.
///
/// Every frame of a looping animation that is not cached is decoded again on every loop, so a
/// byte of budget saves the most CPU when it completes a whole animation. The policy:
///
/// 1. Each active image gets a *lookahead*: the frames covering ``lookaheadMs`` of playback from
///    its playhead (never fewer than ``minimumWindow``), so its next frames are decoded before
///    they are asked for. When the lookaheads alone exceed the budget they shrink in
///    proportion (still never below ``minimumWindow``).
/// 2. What is left completes whole animations, in this order: those FLAnimatedImage calls small
///    (≤ ``wholeAnimationBytes`` decoded, 10 MB) first, then those that save the most decoded
///    frames per second for each byte they need; an image already whole keeps its place while
///    it still fits, so windows do not flap.
/// 3. What is left after that deepens the other windows evenly.
///
/// Under memory pressure windows are capped (see ``PressureController``). A window counts the
/// frame at the playhead: a window of 1 keeps just the frame last asked for.
public struct WindowPolicy: Sendable, Equatable {
    /// Animations whose decoded frames fit in this many bytes are cached whole first when the
    /// budget has room for them (FLAnimatedImage's 10 MB rule).
    public var wholeAnimationBytes: Int
    /// The smallest decode-ahead window outside memory pressure.
    public var minimumWindow: Int
    /// Playback time decoded ahead of each playhead, in milliseconds.
    public var lookaheadMs: Int

    public init(wholeAnimationBytes: Int = 10_000_000, minimumWindow: Int = 2, lookaheadMs: Int = 500) {
        self.wholeAnimationBytes = wholeAnimationBytes
        self.minimumWindow = max(1, minimumWindow)
        self.lookaheadMs = max(0, lookaheadMs)
    }

    /// What the policy needs to know of one active image.
    public struct Demand: Sendable, Equatable {
        public var frameCount: Int
        /// RGBA bytes of one canvas.
        public var decodedFrameBytes: Int
        /// The average PNG size of its frames (an estimate until frames are encoded).
        public var encodedFrameBytes: Int
        /// One play, in milliseconds.
        public var loopMs: Int
        /// It was whole in the previous allocation.
        public var wasWhole: Bool

        public init(
            frameCount: Int, decodedFrameBytes: Int, encodedFrameBytes: Int, loopMs: Int,
            wasWhole: Bool = false
        ) {
            self.frameCount = frameCount
            self.decodedFrameBytes = decodedFrameBytes
            self.encodedFrameBytes = encodedFrameBytes
            self.loopMs = loopMs
            self.wasWhole = wasWhole
        }
    }

    /// The windows of all active images, in the order given, for `budget` bytes of frames.
    public func windows(for demands: [Demand], budget: Int, cap: Int?) -> [Int] {
        guard !demands.isEmpty else { return [] }
        let sizes = demands.map { max(1, $0.encodedFrameBytes) }
        // 1. Lookaheads.
        var windows = demands.map { lookahead(of: $0) }
        let lookaheadBytes = zip(windows, sizes).reduce(0) { $0 + $1.0 * $1.1 }
        var left = budget - lookaheadBytes
        if left < 0 {
            let scale = Double(max(0, budget)) / Double(max(1, lookaheadBytes))
            windows = zip(windows, demands).map { window, demand in
                min(demand.frameCount, max(minimumWindow, Int(Double(window) * scale)))
            }
            return capped(windows, demands, cap)
        }
        // 2. Whole animations, best first.
        let candidates = demands.indices.filter { windows[$0] < demands[$0].frameCount }
        let ordered = candidates.sorted { a, b in
            let (da, db) = (demands[a], demands[b])
            if da.wasWhole != db.wasWhole { return da.wasWhole }
            let (sa, sb) = (isSmall(da), isSmall(db))
            if sa != sb { return sa }
            return savingPerByte(da, extra: wholeExtra(da, windows[a], sizes[a]))
                > savingPerByte(db, extra: wholeExtra(db, windows[b], sizes[b]))
        }
        for i in ordered {
            let extra = wholeExtra(demands[i], windows[i], sizes[i])
            if extra <= left {
                windows[i] = demands[i].frameCount
                left -= extra
            }
        }
        // 3. Deeper windows for the rest, an equal share of bytes each.
        let partial = demands.indices.filter { windows[$0] < demands[$0].frameCount }
        if !partial.isEmpty, left > 0 {
            let share = left / partial.count
            for i in partial {
                windows[i] = min(demands[i].frameCount, windows[i] + share / sizes[i])
            }
        }
        return capped(windows, demands, cap)
    }

    /// Whether an animation is whole at `window` frames (after a cap, it may not be).
    public func isWhole(_ window: Int, frameCount: Int) -> Bool { window >= frameCount && frameCount > 0 }

    /// The frames covering `lookaheadMs` of playback at the image's average delay.
    func lookahead(of demand: Demand) -> Int {
        guard demand.frameCount > 0 else { return 0 }
        let averageDelay = max(1, demand.loopMs / demand.frameCount)
        let frames = (lookaheadMs + averageDelay - 1) / averageDelay
        return min(demand.frameCount, max(minimumWindow, frames))
    }

    private func isSmall(_ demand: Demand) -> Bool {
        let total = demand.frameCount.multipliedReportingOverflow(by: demand.decodedFrameBytes)
        return !total.overflow && total.partialValue <= wholeAnimationBytes
    }

    private func wholeExtra(_ demand: Demand, _ window: Int, _ size: Int) -> Int {
        (demand.frameCount - window) * size
    }

    /// Frame decodes per second saved by caching the image whole, per byte it costs.
    private func savingPerByte(_ demand: Demand, extra: Int) -> Double {
        let framesPerSecond = Double(demand.frameCount) * 1000 / Double(max(1, demand.loopMs))
        return framesPerSecond / Double(max(1, extra))
    }

    private func capped(_ windows: [Int], _ demands: [Demand], _ cap: Int?) -> [Int] {
        zip(windows, demands).map { window, demand in
            var w = window
            if let cap { w = min(w, cap) }
            return max(demand.frameCount > 0 ? 1 : 0, min(w, demand.frameCount))
        }
    }
}
