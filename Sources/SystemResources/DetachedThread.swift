import CLinux
import Dispatch
import Glibc  // pthread

/// Starts a detached POSIX thread that runs one closure: for work that blocks or runs long
/// beside Dispatch's pool, which holds about one thread per core — a thread of that pool
/// waiting on a semaphore leaves the work queued behind it waiting too. The thread starter of the
/// event loops and the decode, encode, monitor, log and lookup threads (Foundation's `Thread` is
/// not used: it would link ICU into the binary). Each runs at the process's nice value plus an
/// offset (``ThreadPriority``), whichever thread started it.
public enum DetachedThread {
    private final class Body: Sendable {
        let name: String?
        let niceOffset: Int32
        let run: @Sendable () -> Void
        init(_ name: String?, _ niceOffset: Int32, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.niceOffset = niceOffset
            self.run = run
        }
    }

    /// Runs `run` on a new thread named `name` (Linux keeps its first 15 bytes, which `top -H`
    /// and debuggers show) at the process's nice value plus `niceOffset`. With no thread to be
    /// had, on Dispatch's shared pool instead.
    public static func start(
        name: String? = nil, niceOffset: Int32 = 0, _ run: @escaping @Sendable () -> Void
    ) {
        let body = Unmanaged.passRetained(Body(name, niceOffset, run))
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                if let name = body.name { _ = flipbook_set_thread_name(name) }
                ThreadPriority.applyToCurrentThread(offset: body.niceOffset)
                body.run()
                return nil
            }, body.toOpaque())
        if started == 0 {
            pthread_detach(thread)
        } else {
            body.release()
            DispatchQueue.global().async(execute: run)  // no thread to be had: the shared pool
        }
    }
}
