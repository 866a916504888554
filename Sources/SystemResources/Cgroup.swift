import Glibc

/// Where this process's control group lives and how to read its small text files: what the CPU
/// limit (``CPULimit``) and the memory limit (``CgroupMemory``) are read from.
///
/// cgroup v2 (one unified hierarchy, `0::/path` in `/proc/self/cgroup`) is what containers get
/// today; the v1 `cpu` and `memory` controllers (`N:cpu,cpuacct:/path`, `N:memory:/path`) are
/// read on hosts that still have them, hybrid ones included.
public enum Cgroup {
    /// The default mount point of the cgroup file system.
    public static let defaultMount = "/sys/fs/cgroup"
    /// The file that names this process's cgroups.
    public static let defaultSelfCgroup = "/proc/self/cgroup"

    /// The directory of this process's own cgroup v2: `mount` + the `0::` path of `selfCgroup`
    /// when that directory has `file` (a service started by systemd, or nested in a pod), else
    /// `mount` itself (a container's namespaced view, where the process's cgroup is the root).
    public static func processDirectory(
        containing file: String, mount: String = defaultMount,
        selfCgroup: String = defaultSelfCgroup
    ) -> String {
        if let path = unifiedPath(selfCgroup: selfCgroup) {
            let candidate = path == "/" ? mount : mount + path
            if exists(candidate + "/" + file) { return candidate }
        }
        return mount
    }

    /// The `0::` (cgroup v2) path of this process, e.g. `/system.slice/flipbook.service`.
    static func unifiedPath(selfCgroup: String) -> String? {
        guard let text = readSmallFile(selfCgroup) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            return String(line.dropFirst(3))
        }
        return nil
    }

    /// The cgroup v1 path of the controller called `controller` (a line `N:cpu,cpuacct:/path`).
    static func v1Path(controller: String, selfCgroup: String) -> String? {
        guard let text = readSmallFile(selfCgroup) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[1].split(separator: ",").contains(where: { $0 == controller }) else { continue }
            return String(parts[2])
        }
        return nil
    }

    /// `directory` and each parent up to and including `mount`, innermost first: a limit set on
    /// a parent applies to everything below it.
    static func directoriesUp(from directory: String, to mount: String) -> [String] {
        var result = [directory]
        var current = directory
        while current.count > mount.count, let slash = current.lastIndex(of: "/") {
            current = String(current[..<slash])
            if current.count < mount.count { break }
            result.append(current)
        }
        return result
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The whole of a small file (a cgroup or proc file: at most a few KiB), or nil.
    public static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
