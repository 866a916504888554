import Foundation
import Glibc

/// Where tests put the files and directories they make: one directory per test process,
/// `$TMPDIR/flipbook-tests-<pid>`, removed when the process exits, so a test run leaves nothing
/// behind however many services, uploads and renditions it made (a run used to leave ~300
/// directories and ~300 MB). A run that was killed leaves its directory; the next run removes
/// the directories of processes that are gone.
public enum ScratchDirectory {
    private static let prefix = "flipbook-tests-"

    /// This process's directory, made (and its removal at exit arranged) on first use.
    public static let root: String = {
        let temporary = NSTemporaryDirectory()
        removeAbandoned(in: temporary)
        let path = temporary + prefix + String(getpid())
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { ScratchDirectory.removeRoot() }
        return path
    }()

    /// A new, empty directory under `root`; `label` makes it easier to recognise.
    public static func make(_ label: String = "test") -> String {
        let path = newPath(label)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A path under `root` no file has yet (nothing is created).
    public static func newPath(_ label: String) -> String {
        root + "/" + label + "-" + UUID().uuidString
    }

    private static func removeRoot() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Removes the directories of earlier test processes that no longer run.
    private static func removeAbandoned(in temporary: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + name)
            }
        }
    }
}
