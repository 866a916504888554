import CLinux
import Glibc

/// How many CPUs this process may really use: the fewest of the CPUs it may run on
/// (`sched_getaffinity`, which `taskset` and cpusets restrict) and its container's CPU quota
/// (cgroup v2 `cpu.max`, e.g. `200000 100000` = 2 CPUs; v1 `cpu.cfs_quota_us` on older hosts),
/// rounded up, at least 1.
///
/// A container limited to 2 CPUs on a 64-core host sees 64 cores through `sysconf`; threads sized
/// from that would be 64 event loops and 64 decode threads time-sliced onto 2 CPUs. Every thread
/// count of Flipbook follows ``usableCores`` instead: the HTTP server's event loops, the frame
/// cache's decode threads and a renderer's background decoders.
public enum CPULimit {
    /// The CPUs this process may use, read once (the limit of a running container does not
    /// usually change; a restart picks up a new one).
    public static let usableCores: Int = usableCores(
        cgroupMount: Cgroup.defaultMount,
        selfCgroup: Cgroup.defaultSelfCgroup,
        affinity: affinityCount() ?? onlineCount())

    /// The same computation on given inputs (tests use a fake cgroup tree).
    ///
    /// - Parameters:
    ///   - cgroupMount: where the cgroup file system is mounted.
    ///   - selfCgroup: the file naming the process's cgroups (`/proc/self/cgroup`).
    ///   - affinity: the CPUs the process may run on.
    public static func usableCores(cgroupMount: String, selfCgroup: String, affinity: Int) -> Int {
        var cores = max(1, affinity)
        if let quota = quotaCores(cgroupMount: cgroupMount, selfCgroup: selfCgroup) {
            cores = min(cores, quota)
        }
        return max(1, cores)
    }

    /// The tightest CPU quota on the process's cgroup or any parent, in whole CPUs (rounded up);
    /// nil when none is set.
    static func quotaCores(cgroupMount: String, selfCgroup: String) -> Int? {
        var tightest: Int? = nil
        func consider(_ cores: Int?) {
            if let cores { tightest = min(tightest ?? cores, cores) }
        }
        if Cgroup.unifiedPath(selfCgroup: selfCgroup) != nil {
            let own = Cgroup.processDirectory(containing: "cpu.max", mount: cgroupMount, selfCgroup: selfCgroup)
            for directory in Cgroup.directoriesUp(from: own, to: cgroupMount) {
                consider(Cgroup.readSmallFile(directory + "/cpu.max").flatMap(cpuMaxCores))
            }
        }
        if tightest == nil, let path = Cgroup.v1Path(controller: "cpu", selfCgroup: selfCgroup) {
            for mount in [cgroupMount + "/cpu", cgroupMount + "/cpu,cpuacct"] where Cgroup.exists(mount) {
                var directory = path == "/" ? mount : mount + path
                if !Cgroup.exists(directory + "/cpu.cfs_quota_us") { directory = mount }
                for level in Cgroup.directoriesUp(from: directory, to: mount) {
                    consider(
                        v1Cores(
                            quota: Cgroup.readSmallFile(level + "/cpu.cfs_quota_us"),
                            period: Cgroup.readSmallFile(level + "/cpu.cfs_period_us")))
                }
                break
            }
        }
        return tightest
    }

    /// Whole CPUs of a cgroup v2 `cpu.max` (`$MAX $PERIOD`, `max` = no limit), rounded up.
    static func cpuMaxCores(_ text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 1, fields[0] != "max", let quota = Int(fields[0]), quota > 0 else { return nil }
        let period = fields.count >= 2 ? Int(fields[1]) ?? 100_000 : 100_000
        guard period > 0 else { return nil }
        return max(1, (quota + period - 1) / period)
    }

    /// Whole CPUs of cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (quota -1 = no limit).
    static func v1Cores(quota: String?, period: String?) -> Int? {
        guard let quotaText = quota, let q = Int(quotaText.split(separator: "\n").first ?? ""), q > 0,
            let periodText = period, let p = Int(periodText.split(separator: "\n").first ?? ""), p > 0
        else { return nil }
        return max(1, (q + p - 1) / p)
    }

    /// The CPUs in this process's affinity mask, or nil when it cannot be read.
    static func affinityCount() -> Int? {
        // Room for 8192 CPUs; the kernel fails with EINVAL when its mask is larger.
        var mask = [UInt64](repeating: 0, count: 128)
        let result = mask.withUnsafeMutableBytes { raw in
            flipbook_sched_getaffinity(raw.baseAddress!, UInt(raw.count))
        }
        guard result > 0 else { return nil }
        let words = (result + 7) / 8
        let count = mask.prefix(words).reduce(0) { $0 + $1.nonzeroBitCount }
        return count > 0 ? count : nil
    }

    /// The CPUs online (the host's count).
    static func onlineCount() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
