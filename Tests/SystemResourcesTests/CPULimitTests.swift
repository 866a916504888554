import Foundation
import Testing

@testable import SystemResources

/// The CPU limit read from fake cgroup trees: cgroup v2 `cpu.max` (a container's namespaced view
/// and a nested systemd service), cgroup v1 quotas, and the affinity mask.
@Suite struct CPULimitTests {
    /// A temporary directory laid out like `/sys/fs/cgroup` plus a `/proc/self/cgroup` file.
    struct FakeTree {
        let root: URL
        var mount: String { root.appendingPathComponent("cgroup").path }
        var selfCgroup: String { root.appendingPathComponent("self-cgroup").path }

        init(selfCgroup text: String) throws {
            root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cpu-limit-" + UUID().uuidString)
            try FileManager.default.createDirectory(
                atPath: root.appendingPathComponent("cgroup").path,
                withIntermediateDirectories: true)
            try text.write(toFile: selfCgroup, atomically: true, encoding: .utf8)
        }

        /// Writes `contents` to `relative` under the mount, creating directories.
        func write(_ relative: String, _ contents: String) throws {
            let path = mount + "/" + relative
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
        }

        func cores(affinity: Int) -> Int {
            CPULimit.usableCores(cgroupMount: mount, selfCgroup: selfCgroup, affinity: affinity)
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func containerQuotaOfTwoCPUs() throws {
        let tree = try FakeTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "200000 100000\n")
        #expect(tree.cores(affinity: 64) == 2)
    }

    @Test func noQuotaMeansEveryCoreOfTheAffinityMask() throws {
        let tree = try FakeTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "max 100000\n")
        #expect(tree.cores(affinity: 8) == 8)
    }

    @Test func fractionalQuotaRoundsUp() throws {
        let tree = try FakeTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "150000 100000\n")
        #expect(tree.cores(affinity: 8) == 2)
        try tree.write("cpu.max", "50000 100000\n")
        #expect(tree.cores(affinity: 8) == 1)
    }

    @Test func affinityNarrowerThanTheQuotaWins() throws {
        let tree = try FakeTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        try tree.write("cpu.max", "400000 100000\n")
        #expect(tree.cores(affinity: 3) == 3)
    }

    @Test func aParentLimitAppliesToANestedService() throws {
        let tree = try FakeTree(selfCgroup: "0::/system.slice/flipbook.service\n")
        defer { tree.remove() }
        try tree.write("system.slice/flipbook.service/cpu.max", "max 100000\n")
        try tree.write("system.slice/cpu.max", "300000 100000\n")
        #expect(tree.cores(affinity: 16) == 3)
        try tree.write("system.slice/flipbook.service/cpu.max", "100000 100000\n")
        #expect(tree.cores(affinity: 16) == 1)
    }

    @Test func cgroupV1QuotaOnOlderHosts() throws {
        let tree = try FakeTree(selfCgroup: "4:memory:/\n3:cpu,cpuacct:/\n0::/\n")
        defer { tree.remove() }
        try tree.write("cpu,cpuacct/cpu.cfs_quota_us", "300000\n")
        try tree.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n")
        #expect(tree.cores(affinity: 32) == 3)
        try tree.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
        #expect(tree.cores(affinity: 32) == 32)
    }

    @Test func missingFilesMeanTheAffinityMask() throws {
        let tree = try FakeTree(selfCgroup: "0::/\n")
        defer { tree.remove() }
        #expect(tree.cores(affinity: 6) == 6)
        #expect(CPULimit.usableCores(cgroupMount: "/nonexistent", selfCgroup: "/nonexistent", affinity: 0) == 1)
    }

    @Test func thisProcessGetsAtLeastOneAndNoMoreThanTheHostHas() {
        #expect(CPULimit.usableCores >= 1)
        #expect(CPULimit.usableCores <= CPULimit.onlineCount())
        #expect(CPULimit.affinityCount().map { $0 >= 1 } ?? true)
    }

    @Test func processDirectoryOfANestedCgroup() throws {
        let tree = try FakeTree(selfCgroup: "0::/kubepods/pod1\n")
        defer { tree.remove() }
        #expect(Cgroup.processDirectory(containing: "cpu.max", mount: tree.mount, selfCgroup: tree.selfCgroup) == tree.mount)
        try tree.write("kubepods/pod1/cpu.max", "max 100000\n")
        #expect(
            Cgroup.processDirectory(containing: "cpu.max", mount: tree.mount, selfCgroup: tree.selfCgroup)
                == tree.mount + "/kubepods/pod1")
    }
}
