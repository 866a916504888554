import FoundationEssentials
import SystemResources

/// How much memory the process may use and how much is free: its cgroup's memory limit (v2
/// `memory.max` or v1 `memory.limit_in_bytes`, ``CgroupMemory``) when it has one below the
/// machine's memory, else physical memory; available memory from the cgroup (limit − working
/// set) or `/proc/meminfo` `MemAvailable`.
public struct MemoryLimits: Sendable, Equatable {
    public var limitBytes: Int
    public var availableBytes: Int
    /// True when `limitBytes` comes from a cgroup rather than the machine.
    public var fromCgroup: Bool

    /// The default cache budget: min(20% of the limit, 60% of what is available) — SDWebImage's
    /// rule, with the container's limit standing in for the device's RAM.
    public var defaultCacheBudget: Int {
        cacheBudget(fractionOfLimit: 0.2)
    }

    /// min(`fraction` × the limit, 60% of what is available), at least 16 MiB.
    public func cacheBudget(fractionOfLimit fraction: Double) -> Int {
        max(16 << 20, min(Int(Double(limitBytes) * fraction), availableBytes * 6 / 10))
    }

    /// The default decode-memory budget (``DecodeMemoryBudget``): min(25% of the limit, 60% of
    /// what is available), at least 64 MiB. With the cache's 20%, what Flipbook bounds is under
    /// half the limit; the rest is the binary, mapped files and the kernel's share. 25% of a
    /// 2 GiB container (512 MiB) renders a 5700×5700 frame from cold; a 49 MP frame needs
    /// about 790 MB (``DecodeMemory``), a 3.2 GiB limit.
    public var decodeBudget: Int {
        max(64 << 20, min(limitBytes / 4, availableBytes * 6 / 10))
    }

    /// Reads the limits of this process from `cgroupRoot` (default `/sys/fs/cgroup`) and
    /// `/proc/meminfo`.
    public static func detect(cgroupRoot: String = CgroupMemory.processRoot(), meminfo: String = "/proc/meminfo") -> MemoryLimits
    {
        let info = Self.meminfo(meminfo)
        let total = info["MemTotal"] ?? Int(ProcessInfo.processInfo.physicalMemory)
        let available = info["MemAvailable"] ?? total / 2
        let cgroup = CgroupMemory(root: cgroupRoot)
        if let max = cgroup.limit, max < total {
            let used = cgroup.workingSet ?? 0
            return MemoryLimits(
                limitBytes: max, availableBytes: Swift.max(0, Swift.min(available, max - used)),
                fromCgroup: true)
        }
        return MemoryLimits(limitBytes: total, availableBytes: available, fromCgroup: false)
    }

    /// `/proc/meminfo` values in bytes, by name.
    static func meminfo(_ path: String) -> [String: Int] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " })
            guard parts.count >= 2, let kb = Int(parts[1]) else { continue }
            values[String(parts[0])] = kb * 1024
        }
        return values
    }
}
