import CLinux
import Glibc  // getpriority, setpriority, errno

/// The nice value of the threads Flipbook starts, taken from the process's rather than inherited
/// from whichever thread starts them. On Linux, Dispatch gives each of its worker threads the nice
/// value of its quality of service (0 for the default one, −4 for user-initiated, whatever the
/// process was started with), and a POSIX thread inherits its creator's: an event loop started from
/// a Swift task ran at nice 0 under `nice -n -10 flipbook serve` (or systemd's `Nice=`) while its
/// clients ran at −10, and a waking client then preempted the loop after every response it sent
/// (BENCHMARKS.md, "Cached frames vs nginx"). So every thread ``DetachedThread`` starts runs at the
/// main thread's nice value plus an offset (the decode threads' +10), set before its work begins.
public enum ThreadPriority {
    /// The process's nice value: the main thread's, which Dispatch leaves alone (for
    /// `PRIO_PROCESS`, Linux reads the thread whose id is the process id).
    public static var processNice: Int32 {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        return errno == 0 ? value : 0
    }

    /// `base + offset` kept within the nice range (−20 … 19).
    public static func nice(base: Int32, offset: Int32) -> Int32 {
        min(19, max(-20, base + offset))
    }

    /// Sets the calling thread's nice value to the process's plus `offset`. Lowering a nice value
    /// (raising priority) needs `CAP_SYS_NICE` or `RLIMIT_NICE`: without them a thread Dispatch left
    /// above the process's value stays where it is, which is what an unprivileged process had before.
    public static func applyToCurrentThread(offset: Int32 = 0) {
        let thread = id_t(flipbook_thread_id())
        let target = nice(base: processNice, offset: offset)
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
        if errno == 0 && current == target { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, target)
    }

    /// The calling thread's nice value.
    static var currentThreadNice: Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(flipbook_thread_id()))
    }
}
