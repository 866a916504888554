import FlipbookTestSupport
import Foundation
import Testing

@testable import SystemResources

/// The memory cgroup read from fake trees of both kinds: cgroup v2 (a container's namespaced view,
/// a nested service under a limited parent) and cgroup v1 (a container on a hybrid host, as
/// podman and Docker make them on cgroup v1; a service on such a host; "no limit").
@Suite struct CgroupMemoryTests {
    static let mib = 1 << 20
    /// What cgroup v1 says for "no limit": the largest page count, in bytes.
    static let v1Unlimited = "9223372036854771712\n"

    @Test func v2ContainerLimitUsageAndWorkingSet() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("memory.max", "268435456\n")
        try tree.write("memory.current", "\(200 * Self.mib)\n")
        try tree.write("memory.stat", "anon 1000\nfile 2000\ninactive_file \(50 * Self.mib)\nactive_file 7\n")
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.mount)
        let memory = CgroupMemory(root: root)
        #expect(memory.version == .v2)
        #expect(memory.limit == 256 * Self.mib)
        #expect(memory.current == 200 * Self.mib)
        #expect(memory.workingSet == 150 * Self.mib)
    }

    @Test func v2MaxMeansNoLimit() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("memory.max", "max\n")
        try tree.write("memory.current", "4096\n")
        let memory = CgroupMemory(root: CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup))
        #expect(memory.version == .v2)
        #expect(memory.limit == nil)
        #expect(memory.current == 4096)
        #expect(memory.workingSet == 4096)
    }

    @Test func v2ParentLimitBoundsANestedService() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/system.slice/flipbook.service\n")
        defer { tree.remove() }
        try tree.write("system.slice/flipbook.service/memory.max", "max\n")
        try tree.write("system.slice/flipbook.service/memory.current", "100\n")
        try tree.write("system.slice/memory.max", "\(512 * Self.mib)\n")
        try tree.write("system.slice/memory.current", "\(300 * Self.mib)\n")
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.path("system.slice"))
        #expect(CgroupMemory(root: root).limit == 512 * Self.mib)
        #expect(CgroupMemory(root: root).current == 300 * Self.mib)
        // A tighter limit of its own wins.
        try tree.write("system.slice/flipbook.service/memory.max", "\(128 * Self.mib)\n")
        let own = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(own == tree.path("system.slice/flipbook.service"))
        #expect(CgroupMemory(root: own).limit == 128 * Self.mib)
    }

    @Test func v2PressureStallFigure() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("memory.max", "1000\n")
        try tree.write(
            "memory.pressure",
            "some avg10=12.25 avg60=1.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        #expect(CgroupMemory(root: tree.mount).pressureSomeAvg10 == 12.25)
    }

    /// A container on a cgroup v1 host (podman or Docker, `--memory 256m`): `/proc/self/cgroup`
    /// names the host's path, and the container's own group is mounted at `memory/`.
    @Test func v1ContainerLimitUsageAndWorkingSet() throws {
        let tree = try FakeCgroupTree(
            selfCgroup: "9:name=systemd:/libpod_parent/libpod-abc\n4:memory:/libpod_parent/libpod-abc\n"
                + "1:cpu:/libpod_parent/libpod-abc\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", "268435456\n")
        try tree.write("memory/memory.usage_in_bytes", "\(220 * Self.mib)\n")
        try tree.write(
            "memory/memory.stat",
            "cache 1\nrss 2\ninactive_file 5\nhierarchical_memory_limit 268435456\n"
                + "total_cache 3\ntotal_inactive_file \(100 * Self.mib)\n")
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.path("memory"))
        let memory = CgroupMemory(root: root)
        #expect(memory.version == .v1)
        #expect(memory.limit == 256 * Self.mib)
        #expect(memory.current == 220 * Self.mib)
        #expect(memory.workingSet == 120 * Self.mib)
        #expect(memory.pressureSomeAvg10 == nil)
    }

    @Test func v1UnlimitedMeansNoLimit() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", Self.v1Unlimited)
        try tree.write("memory/memory.usage_in_bytes", "8192\n")
        try tree.write("memory/memory.stat", "hierarchical_memory_limit 9223372036854771712\n")
        let memory = CgroupMemory(root: CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup))
        #expect(memory.version == .v1)
        #expect(memory.limit == nil)
        #expect(memory.current == 8192)
    }

    /// A parent's limit the container cannot see (a Kubernetes pod's, on v1) is in
    /// `hierarchical_memory_limit`.
    @Test func v1InheritedLimitFromMemoryStat() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/kubepods/pod1/c1\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", Self.v1Unlimited)
        try tree.write("memory/memory.stat", "hierarchical_memory_limit \(300 * Self.mib)\n")
        #expect(CgroupMemory(root: tree.path("memory")).limit == 300 * Self.mib)
        try tree.write("memory/memory.limit_in_bytes", "\(200 * Self.mib)\n")
        #expect(CgroupMemory(root: tree.path("memory")).limit == 200 * Self.mib)
    }

    /// A service on a cgroup v1 host: its own group has no limit, its parent has one.
    @Test func v1HostServiceUnderALimitedParent() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/jobs/flipbook\n0::/\n")
        defer { tree.remove() }
        try tree.write("memory/memory.limit_in_bytes", Self.v1Unlimited)
        try tree.write("memory/jobs/memory.limit_in_bytes", "\(1024 * Self.mib)\n")
        try tree.write("memory/jobs/memory.usage_in_bytes", "\(600 * Self.mib)\n")
        try tree.write("memory/jobs/flipbook/memory.limit_in_bytes", Self.v1Unlimited)
        try tree.write("memory/jobs/flipbook/memory.usage_in_bytes", "\(10 * Self.mib)\n")
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.path("memory/jobs"))
        #expect(CgroupMemory(root: root).limit == 1024 * Self.mib)
        #expect(CgroupMemory(root: root).current == 600 * Self.mib)
    }

    /// A hybrid host names a unified (`0::`) group that has no memory files: the v1 controller
    /// is the one to read.
    @Test func hybridHostReadsTheV1Controller() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("unified/cgroup.procs", "1\n")
        try tree.write("memory/memory.limit_in_bytes", "67108864\n")
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.path("memory"))
        #expect(CgroupMemory(root: root).limit == 64 * Self.mib)
    }

    @Test func noMemoryControllerMeansNoFigures() throws {
        let tree = try FakeCgroupTree(selfCgroup: "1:cpu:/\n")
        defer { tree.remove() }
        let root = CgroupMemory.processRoot(mount: tree.mount, selfCgroup: tree.selfCgroup)
        #expect(root == tree.mount)
        let memory = CgroupMemory(root: root)
        #expect(memory.version == nil)
        #expect(memory.limit == nil)
        #expect(memory.current == nil)
        #expect(memory.workingSet == nil)
        #expect(CgroupMemory.processRoot(mount: "/nonexistent", selfCgroup: "/nonexistent") == "/nonexistent")
    }

    /// The working set never goes below zero, whatever memory.stat says.
    @Test func workingSetIsNeverNegative() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("memory.max", "1000\n")
        try tree.write("memory.current", "100\n")
        try tree.write("memory.stat", "inactive_file 5000\n")
        #expect(CgroupMemory(root: tree.mount).workingSet == 0)
    }
}
