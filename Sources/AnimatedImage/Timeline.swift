/// When each frame plays, as a browser plays it: raw delays from the file, effective delays
/// (a raw delay of 10 ms or less plays as 100 ms), start times, total duration, loop count, and
/// the frame shown at any moment.
public struct Timeline: Sendable, Equatable {
    /// Delays at or below this many milliseconds are played as ``clampedDelayMs``
    /// (Chromium, Firefox and Safari all do this, so files saying "0" do not spin).
    public static let clampThresholdMs = 10
    public static let clampedDelayMs = 100

    /// What the file says, in milliseconds.
    public let rawDelaysMs: [Int]
    /// What a browser plays, in milliseconds.
    public let delaysMs: [Int]
    /// Start of each frame on the played timeline, in milliseconds.
    public let timestampsMs: [Int]
    /// Length of one play, in milliseconds.
    public let durationMs: Int
    /// Total number of plays; 0 = forever.
    public let playCount: Int
    /// Greatest common divisor of the effective delays: the coarsest timer tick that still
    /// lands on every frame change.
    public let delayGcdMs: Int

    public init(rawDelaysMs: [Int], playCount: Int) {
        self.rawDelaysMs = rawDelaysMs
        let delays = rawDelaysMs.map { $0 <= Self.clampThresholdMs ? Self.clampedDelayMs : $0 }
        self.delaysMs = delays
        var start = 0
        var stamps: [Int] = []
        stamps.reserveCapacity(delays.count)
        for delay in delays {
            stamps.append(start)
            start += delay
        }
        self.timestampsMs = stamps
        self.durationMs = start
        self.playCount = max(0, playCount)
        self.delayGcdMs = delays.reduce(0) { Self.gcd($0, $1) }
    }

    /// WebCodecs' `ImageTrack.repetitionCount`: plays − 1, or infinite.
    public var repetitionCount: RepetitionCount {
        playCount == 0 ? .infinite : .count(playCount - 1)
    }

    /// The frame on screen `ms` milliseconds after playback started: the animation loops
    /// `playCount` times (forever when 0); after the last play the last frame stays.
    /// Negative times give frame 0.
    public func frameIndex(atMs ms: Int) -> Int {
        frameIndex(at: PlaybackTime(milliseconds: ms))
    }

    /// The frame on screen at `time`: the one whose interval `[timestamp, timestamp + delay)`
    /// of the current play holds it, the animation looping `playCount` times (forever when 0);
    /// after the last play the last frame stays.
    public func frameIndex(at time: PlaybackTime) -> Int {
        guard delaysMs.count > 1, durationMs > 0 else { return 0 }
        let (plays, offset) = time.divided(by: durationMs, quotientCap: playCount > 0 ? playCount : Int.max)
        if playCount > 0 && plays >= playCount { return delaysMs.count - 1 }
        // The last frame whose start is at or before `offset`.
        var low = 0
        var high = timestampsMs.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if timestampsMs[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return low
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }
}

/// How many times an animation repeats after its first play, as WebCodecs reports it.
public enum RepetitionCount: Sendable, Equatable, CustomStringConvertible {
    case infinite
    case count(Int)

    public var description: String {
        switch self {
        case .infinite: return "infinite"
        case .count(let n): return String(n)
        }
    }
}
