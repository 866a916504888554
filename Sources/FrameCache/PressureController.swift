/// A memory-pressure level, from the simulated signal (`POST /admin/memory-pressure`, SIGUSR1)
/// or the cgroup monitor.
public enum PressureLevel: String, Sendable, Codable, Comparable {
    case normal, warning, critical

    private var rank: Int { self == .normal ? 0 : self == .warning ? 1 : 2 }
    public static func < (a: PressureLevel, b: PressureLevel) -> Bool { a.rank < b.rank }
}

/// The timing of the cache's response to memory pressure (FLAnimatedImage's staged regrowth,
/// PINRemoteImage's give-up-after-repeated-warnings).
public struct PressureSchedule: Sendable, Equatable {
    /// After a warning, windows are 1 frame, then ``reducedWindow`` after ``firstRegrowthSeconds``,
    /// then unrestricted ``secondRegrowthSeconds`` later.
    public var firstRegrowthSeconds: Double = 2
    public var reducedWindow = 2
    public var secondRegrowthSeconds: Double = 3
    /// This many warnings within ``repeatedWarningSeconds`` put the cache in on-demand mode
    /// (window 1) until ``repeatedWarningSeconds`` pass without a warning.
    public var warningsForOnDemand = 3
    public var repeatedWarningSeconds: Double = 60

    public init() {}
}

/// The pressure state machine. It keeps only signal times; window caps and the reported level
/// are worked out from the clock when asked, so no timer is needed for regrowth.
public struct PressureController: Sendable {
    public let schedule: PressureSchedule
    private var lastSignal: (level: PressureLevel, at: Double)? = nil
    private var recentWarnings: [Double] = []
    private var onDemandSince: Double? = nil

    public init(schedule: PressureSchedule = PressureSchedule()) {
        self.schedule = schedule
    }

    /// Records a signal at time `t`.
    public mutating func signal(_ level: PressureLevel, at t: Double) {
        guard level != .normal else { return }
        lastSignal = (level, t)
        recentWarnings.append(t)
        recentWarnings.removeAll { t - $0 > schedule.repeatedWarningSeconds }
        if recentWarnings.count >= schedule.warningsForOnDemand, onDemandSince == nil {
            onDemandSince = t
        }
    }

    /// True while repeated warnings keep the cache decoding on demand only.
    public func isOnDemand(at t: Double) -> Bool {
        guard onDemandSince != nil, let last = recentWarnings.last else { return false }
        return t - last < schedule.repeatedWarningSeconds
    }

    /// The largest window allowed at time `t`, or nil when windows are unrestricted.
    public mutating func windowCap(at t: Double) -> Int? {
        if onDemandSince != nil {
            if isOnDemand(at: t) { return 1 }
            onDemandSince = nil
        }
        guard let signal = lastSignal else { return nil }
        let elapsed = t - signal.at
        if elapsed < schedule.firstRegrowthSeconds { return 1 }
        if elapsed < schedule.firstRegrowthSeconds + schedule.secondRegrowthSeconds { return schedule.reducedWindow }
        return nil
    }

    /// The level in force at `t`: the last signal's while its restrictions last, else normal.
    public mutating func level(at t: Double) -> PressureLevel {
        guard windowCap(at: t) != nil else { return .normal }
        return lastSignal?.level ?? .warning
    }
}
