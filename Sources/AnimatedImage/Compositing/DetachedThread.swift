import Dispatch

#if canImport(Glibc)
import Glibc  // pthread
#endif

/// Starts a detached POSIX thread that runs one closure: for work that blocks or runs long
/// beside Dispatch's pool, which holds about one thread per core — a thread of that pool
/// waiting on a semaphore leaves the work queued behind it waiting too.
enum DetachedThread {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) {
        let body = Unmanaged.passRetained(Body(run))
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
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
