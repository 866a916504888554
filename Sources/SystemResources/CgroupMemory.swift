/// The memory controller of the control group whose limit applies to this process, cgroup v2
/// or v1: the limit, the usage, the working set and (v2) the pressure-stall figure. What the
/// frame cache's default budgets and its memory-pressure monitor are computed from.
///
/// | | cgroup v2 | cgroup v1 |
/// |---|---|---|
/// | limit | `memory.max` (`max` = none) | `memory.limit_in_bytes`, and `hierarchical_memory_limit` of `memory.stat` (a parent's) |
/// | usage | `memory.current` | `memory.usage_in_bytes` |
/// | page cache the kernel drops first | `inactive_file` of `memory.stat` | `total_inactive_file` of `memory.stat` |
/// | stalls | `memory.pressure` (PSI) | — |
///
/// A v1 limit of 9223372036854771712 (the largest page count the kernel keeps, in bytes) means
/// none; so does any value from 2⁶² up.
public struct CgroupMemory: Sendable, Equatable {
    /// Which cgroup interface a directory speaks.
    public enum Version: Sendable, Equatable {
        case v1, v2
    }

    /// The directory read: the cgroup whose limit applies (``processRoot(mount:selfCgroup:)``).
    public let root: String
    /// v2 when `root` has `memory.max`, v1 when it has `memory.limit_in_bytes`, nil when it has
    /// neither (no memory controller: then every figure is nil). Read from the files each time,
    /// as every figure is.
    public var version: Version? { Self.version(of: root) }

    /// Limits from this value up mean "no limit" (v1 reports 2⁶³ − 4096 rounded to pages).
    static let unlimited = 1 << 62

    public init(root: String = CgroupMemory.processRoot()) {
        self.root = root
    }

    /// The interface the memory files of `directory` belong to, or nil when it has none.
    static func version(of directory: String) -> Version? {
        if Cgroup.exists(directory + "/memory.max") { return .v2 }
        if Cgroup.exists(directory + "/memory.limit_in_bytes") { return .v1 }
        return nil
    }

    /// The limit in bytes; nil when there is none.
    public var limit: Int? {
        switch version {
        case .v2:
            return Self.limitValue(Self.number(at: root + "/memory.max"))
        case .v1:
            let own = Self.limitValue(Self.number(at: root + "/memory.limit_in_bytes"))
            let inherited = Self.limitValue(statValue("hierarchical_memory_limit"))
            switch (own, inherited) {
            case (let a?, let b?): return min(a, b)
            case (let a, let b): return a ?? b
            }
        case nil:
            return nil
        }
    }

    /// What the group uses now, page cache included (v2 `memory.current`, v1
    /// `memory.usage_in_bytes`).
    public var current: Int? {
        switch version {
        case .v2: return Self.number(at: root + "/memory.current")
        case .v1: return Self.number(at: root + "/memory.usage_in_bytes")
        case nil: return nil
        }
    }

    /// The usage less the inactive page cache, which the kernel reclaims before it would kill:
    /// the "working set" that container runtimes and the kubelet compare with the limit. A group
    /// that wrote many files sits near its limit in ``current`` without being short of memory.
    public var workingSet: Int? {
        guard let current else { return nil }
        let inactive = statValue(version == .v1 ? "total_inactive_file" : "inactive_file")
        return max(0, current - (inactive ?? 0))
    }

    /// The `some avg10` figure of `memory.pressure` (PSI, cgroup v2 only): the share of the last
    /// 10 s in which some task stalled on memory, in percent.
    public var pressureSomeAvg10: Double? {
        guard version == .v2, let text = Cgroup.readSmallFile(root + "/memory.pressure") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("some ") {
            for field in line.split(separator: " ") where field.hasPrefix("avg10=") {
                return Double(field.dropFirst(6))
            }
        }
        return nil
    }

    /// `memory.stat` as name → value.
    var stat: [String: Int] {
        guard let text = Cgroup.readSmallFile(root + "/memory.stat") else { return [:] }
        var values: [String: Int] = [:]
        for line in text.utf8.split(separator: 0x0A) {
            let fields = line.split(separator: 0x20)
            if fields.count == 2, let value = Self.integer(fields[1]) {
                values[String(decoding: fields[0], as: UTF8.self)] = value
            }
        }
        return values
    }

    /// The value of `name` in `memory.stat`, found by comparing bytes: the memory-pressure monitor
    /// reads it several times a second, and splitting the file into `Character`s and a dictionary
    /// cost about 850,000 instructions a read.
    func statValue(_ name: String) -> Int? {
        guard let text = Cgroup.readSmallFile(root + "/memory.stat") else { return nil }
        let key = Array(name.utf8)
        for line in text.utf8.split(separator: 0x0A) {
            let fields = line.split(separator: 0x20)
            if fields.count == 2, fields[0].elementsEqual(key) { return Self.integer(fields[1]) }
        }
        return nil
    }

    /// A decimal integer written as ASCII bytes (as `Int("…")` reads it), or nil.
    private static func integer(_ bytes: Substring.UTF8View.SubSequence) -> Int? {
        Int(String(decoding: bytes, as: UTF8.self))
    }

    /// The directory of the memory cgroup whose limit applies to this process: of its own
    /// directory and each parent up to the controller's mount, the one with the smallest limit
    /// (a parent's limit bounds everything below it, and its usage counts everything below it),
    /// else its own.
    ///
    /// - cgroup v2 (`0::/path` in `selfCgroup`): the own directory is `mount` + path when that
    ///   has `memory.max`, else `mount` (a container's namespaced view).
    /// - cgroup v1 (a line `N:memory:/path`; the controller mounted at `mount/memory`): the own
    ///   directory is `mount/memory` + path when that has `memory.limit_in_bytes` (a service on
    ///   the host), else `mount/memory` (a container, whose own group is mounted there; the
    ///   limits of parents it cannot see are in its `hierarchical_memory_limit`).
    /// - neither: `mount`, where no memory file is found (no limit).
    public static func processRoot(
        mount: String = Cgroup.defaultMount, selfCgroup: String = Cgroup.defaultSelfCgroup
    ) -> String {
        let unified = Cgroup.processDirectory(containing: "memory.max", mount: mount, selfCgroup: selfCgroup)
        if Cgroup.exists(unified + "/memory.max") {
            return tightest(from: unified, to: mount, file: "memory.max")
        }
        let v1Mount = mount + "/memory"
        if let path = Cgroup.v1Path(controller: "memory", selfCgroup: selfCgroup), Cgroup.exists(v1Mount) {
            let own = path == "/" ? v1Mount : v1Mount + path
            guard Cgroup.exists(own + "/memory.limit_in_bytes") else { return v1Mount }
            return tightest(from: own, to: v1Mount, file: "memory.limit_in_bytes")
        }
        return mount
    }

    /// Of `directory` and its parents up to `top`, the first with the smallest limit in `file`.
    static func tightest(from directory: String, to top: String, file: String) -> String {
        var best = directory
        var bestLimit = limitValue(number(at: directory + "/" + file)) ?? Int.max
        for parent in Cgroup.directoriesUp(from: directory, to: top).dropFirst() {
            if let limit = limitValue(number(at: parent + "/" + file)), limit < bestLimit {
                best = parent
                bestLimit = limit
            }
        }
        return best
    }

    /// A limit file's number, nil for "no limit".
    static func limitValue(_ value: Int?) -> Int? {
        guard let value, value > 0, value < unlimited else { return nil }
        return value
    }

    /// The integer a one-line cgroup file holds, or nil (absent, or `max`).
    static func number(at path: String) -> Int? {
        guard let text = Cgroup.readSmallFile(path) else { return nil }
        return Int(text.split(separator: "\n").first ?? "")
    }
}
