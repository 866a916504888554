import FoundationEssentials
import SystemResources

/// Watches the container's memory and raises pressure on the cache: reads its cgroup's working
/// set against its limit (v2 or v1, ``CgroupMemory``; and the PSI `memory.pressure` figure where
/// present) every `interval` seconds.
///
/// - working set ≥ `criticalFraction` × limit → critical; ≥ `warningFraction` × limit → warning;
/// - PSI "some avg10" ≥ `psiWarningPercent` → warning.
/// A level is raised at most once per `repeatSeconds` while it lasts.
public final class MemoryPressureMonitor: @unchecked Sendable {
    public struct Settings: Sendable {
        public var interval: Double = 1
        public var warningFraction: Double = 0.85
        public var criticalFraction: Double = 0.95
        public var psiWarningPercent: Double = 20
        public var repeatSeconds: Double = 10
        public var cgroupRoot = CgroupMemory.processRoot()
        public init() {}
    }

    private let settings: Settings
    private let cache: FrameCache
    private let condition = ConditionLock()
    private var stopped = false
    private var lastRaised: (level: PressureLevel, at: Date)? = nil

    public init(cache: FrameCache, settings: Settings = Settings()) {
        self.cache = cache
        self.settings = settings
    }

    /// The level the cgroup files show right now.
    public static func level(of memory: CgroupMemory, settings: Settings) -> PressureLevel {
        if let max = memory.limit, max > 0, let used = memory.workingSet {
            let fraction = Double(used) / Double(max)
            if fraction >= settings.criticalFraction { return .critical }
            if fraction >= settings.warningFraction { return .warning }
        }
        if let psi = memory.pressureSomeAvg10, psi >= settings.psiWarningPercent { return .warning }
        return .normal
    }

    /// Starts polling on a thread of its own.
    public func start() {
        DetachedThread.start(name: "flipbook-memory-monitor") { [self] in self.run() }
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// One observation; public so tests can drive it with a fake cgroup directory.
    public func check(now: Date = Date()) {
        let level = Self.level(of: CgroupMemory(root: settings.cgroupRoot), settings: settings)
        guard level != .normal else { return }
        if let last = lastRaised, last.level >= level, now.timeIntervalSince(last.at) < settings.repeatSeconds { return }
        lastRaised = (level, now)
        cache.memoryPressure(level, source: "cgroup")
    }

    private func run() {
        condition.lock()
        while !stopped {
            condition.unlock()
            check()
            condition.lock()
            if stopped { break }
            condition.wait(seconds: settings.interval)
        }
        condition.unlock()
    }
}
