import FlipbookTestSupport
import Foundation
import SystemResources
import Testing

@testable import FrameCache

/// The cache's default budgets and pressure levels from a container's memory cgroup, v1 and v2
/// alike (fake trees; the real container is `make container-test`'s).
@Suite struct MemoryLimitsTests {
    static let mib = 1 << 20

    /// A `/proc/meminfo` of a 24 GiB machine with `availableMiB` available.
    static func meminfo(availableMiB: Int) throws -> String {
        let path = ScratchDirectory.newPath("meminfo")
        try "MemTotal:       25165824 kB\nMemFree:        1000 kB\nMemAvailable:   \(availableMiB * 1024) kB\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `podman run --memory 256m` on a cgroup v1 host: the budgets follow 256 MiB, not the
    /// machine's 24 GiB.
    @Test func v1ContainerLimitSetsTheBudgets() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/libpod_parent/libpod-1\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", "268435456\n")
        try tree.write("memory/memory.usage_in_bytes", "\(30 * Self.mib)\n")
        try tree.write("memory/memory.stat", "total_inactive_file \(10 * Self.mib)\n")
        let limits = MemoryLimits.detect(
            cgroupRoot: CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup),
            meminfo: try Self.meminfo(availableMiB: 20000))
        #expect(limits == MemoryLimits(limitBytes: 256 * Self.mib, availableBytes: 236 * Self.mib, fromCgroup: true))
        #expect(limits.defaultCacheBudget == Int(Double(256 * Self.mib) * 0.2))
        #expect(limits.decodeBudget == 64 * Self.mib)
    }

    @Test func v2ContainerLimitSetsTheBudgets() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("memory.max", "\(2048 * Self.mib)\n")
        try tree.write("memory.current", "\(100 * Self.mib)\n")
        let limits = MemoryLimits.detect(
            cgroupRoot: CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup),
            meminfo: try Self.meminfo(availableMiB: 20000))
        #expect(limits == MemoryLimits(limitBytes: 2048 * Self.mib, availableBytes: 1948 * Self.mib, fromCgroup: true))
        #expect(limits.decodeBudget == 512 * Self.mib)
    }

    /// Page cache the kernel can drop is not counted as used: a container that wrote many files
    /// still gets its budget.
    @Test func inactivePageCacheCountsAsAvailable() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", "\(1024 * Self.mib)\n")
        try tree.write("memory/memory.usage_in_bytes", "\(1000 * Self.mib)\n")
        try tree.write("memory/memory.stat", "total_inactive_file \(900 * Self.mib)\n")
        let limits = MemoryLimits.detect(
            cgroupRoot: tree.path("memory"), meminfo: try Self.meminfo(availableMiB: 20000))
        #expect(limits.availableBytes == 924 * Self.mib)
    }

    /// No limit (v1's "unlimited", or a limit above the machine's memory): the machine's figures.
    @Test func noLimitMeansTheMachine() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", "9223372036854771712\n")
        try tree.write("memory/memory.usage_in_bytes", "\(30 * Self.mib)\n")
        let meminfo = try Self.meminfo(availableMiB: 20000)
        let unlimited = MemoryLimits.detect(cgroupRoot: tree.path("memory"), meminfo: meminfo)
        #expect(unlimited == MemoryLimits(limitBytes: 24576 * Self.mib, availableBytes: 20000 * Self.mib, fromCgroup: false))
        try tree.write("memory/memory.limit_in_bytes", "\(32768 * Self.mib)\n")
        #expect(MemoryLimits.detect(cgroupRoot: tree.path("memory"), meminfo: meminfo) == unlimited)
    }

    /// The monitor's levels from v1 files: the working set against the limit.
    @Test func v1PressureLevels() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n0::/\n")
        defer { tree.remove() }
        let settings = MemoryPressureMonitor.Settings()
        try tree.write("memory/memory.limit_in_bytes", "1000\n")
        try tree.write("memory/memory.usage_in_bytes", "990\n")
        try tree.write("memory/memory.stat", "total_inactive_file 400\n")
        let memory = CgroupMemory(root: tree.path("memory"))
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .normal)
        try tree.write("memory/memory.stat", "total_inactive_file 100\n")
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .warning)
        try tree.write("memory/memory.stat", "total_inactive_file 0\n")
        #expect(MemoryPressureMonitor.level(of: memory, settings: settings) == .critical)
    }
}
