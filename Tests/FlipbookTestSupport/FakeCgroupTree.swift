import Foundation

/// A directory laid out like `/sys/fs/cgroup` (v2 unified, v1 per-controller, or both, as the
/// test writes it) plus a `/proc/self/cgroup` file naming the process's groups: what the CPU and
/// memory limit readers are tested against.
public struct FakeCgroupTree {
    public let root: String
    /// The fake `/sys/fs/cgroup`.
    public var mount: String { root + "/cgroup" }
    /// The fake `/proc/self/cgroup`.
    public var selfCgroup: String { root + "/self-cgroup" }

    /// A new tree whose `/proc/self/cgroup` says `text`, e.g. `"0::/\n"` (a v2 container) or
    /// `"4:memory:/docker/abc\n0::/\n"` (a v1 container on a hybrid host).
    public init(selfCgroup text: String) throws {
        root = ScratchDirectory.make("cgroup-tree")
        try FileManager.default.createDirectory(atPath: root + "/cgroup", withIntermediateDirectories: true)
        try text.write(toFile: root + "/self-cgroup", atomically: true, encoding: .utf8)
    }

    /// Writes `contents` to `relative` under the mount (e.g. `memory/memory.limit_in_bytes`),
    /// making its directories.
    public func write(_ relative: String, _ contents: String) throws {
        let path = path(relative)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The absolute path of `relative` under the mount ("" = the mount itself).
    public func path(_ relative: String) -> String {
        relative.isEmpty ? mount : mount + "/" + relative
    }

    public func remove() { try? FileManager.default.removeItem(atPath: root) }
}
