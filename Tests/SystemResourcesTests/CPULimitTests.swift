import FlipbookTestSupport
import Foundation
import Testing

@testable import SystemResources

/// The CPU limit read from fake cgroup trees: cgroup v2 `cpu.max` (a container's namespaced view
/// and a nested systemd service), cgroup v1 quotas, and the affinity mask.
@Suite struct CPULimitTests {
    @Test func containerQuotaOfTwoCPUs() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "200000 100000\n")
        #expect(cores(tree, affinity: 64) == 2)
    }

    @Test func noQuotaMeansEveryCoreOfTheAffinityMask() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "max 100000\n")
        #expect(cores(tree, affinity: 8) == 8)
    }

    @Test func fractionalQuotaRoundsUp() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "150000 100000\n")
        #expect(cores(tree, affinity: 8) == 2)
        try tree.write("cpu.max", "50000 100000\n")
        #expect(cores(tree, affinity: 8) == 1)
    }

    @Test func affinityNarrowerThanTheQuotaWins() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "400000 100000\n")
        #expect(cores(tree, affinity: 3) == 3)
    }

    @Test func aParentLimitAppliesToANestedService() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/system.slice/flipbook.service\n")
        defer { tree.remove() }
        try tree.write("system.slice/flipbook.service/cpu.max", "max 100000\n")
        try tree.write("system.slice/cpu.max", "300000 100000\n")
        #expect(cores(tree, affinity: 16) == 3)
        try tree.write("system.slice/flipbook.service/cpu.max", "100000 100000\n")
        #expect(cores(tree, affinity: 16) == 1)
    }

    @Test func cgroupV1QuotaOnOlderHosts() throws {
        let tree = try FakeCgroupTree(selfCgroup: "4:memory:/\n3:cpu,cpuacct:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("cpu,cpuacct/cpu.cfs_quota_us", "300000\n")
        try tree.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n")
        #expect(cores(tree, affinity: 32) == 3)
        try tree.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
        #expect(cores(tree, affinity: 32) == 32)
    }

    @Test func missingFilesMeanTheAffinityMask() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        #expect(cores(tree, affinity: 6) == 6)
        #expect(CPULimit.usableCores(cgroupMount: "/nonexistent", selfCgroup: "/nonexistent", affinity: 0) == 1)
    }

    @Test func thisProcessGetsAtLeastOneAndNoMoreThanTheHostHas() {
        #expect(CPULimit.usableCores >= 1)
        #expect(CPULimit.usableCores <= CPULimit.onlineCount())
        #expect(CPULimit.affinityCount().map { $0 >= 1 } ?? true)
    }

    @Test func processDirectoryOfANestedCgroup() throws {
        let tree = try FakeCgroupTree(selfCgroup: "0::/kubepods/pod1\n")
        defer { tree.remove() }
        #expect(Cgroup.processDirectory(containing: "cpu.max", mount: tree.mount, selfCgroup: tree.selfCgroup) == tree.mount)
        try tree.write("kubepods/pod1/cpu.max", "max 100000\n")
        #expect(
            Cgroup.processDirectory(containing: "cpu.max", mount: tree.mount, selfCgroup: tree.selfCgroup)
                == tree.mount + "/kubepods/pod1")
    }

    private func cores(_ tree: FakeCgroupTree, affinity: Int) -> Int {
        CPULimit.usableCores(cgroupMount: tree.mount, selfCgroup: tree.selfCgroup, affinity: affinity)
    }
}
