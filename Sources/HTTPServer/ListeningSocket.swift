import Glibc
import Synchronization

/// The bound listening socket, shared by every event loop: each loop watches it in its own epoll
/// with `EPOLLEXCLUSIVE`, so the kernel wakes one idle loop per new connection, which accepts it
/// (``EventLoop/acceptConnection()`` says who keeps it). The descriptor is closed once, by the last
/// loop to let it go (at the drain or when it stops), so that no loop ever calls `accept` on a
/// number that has been closed and reused. The drain stops it listening at once, whichever loop
/// gets there first (``stopListening()``).
final class ListeningSocket: Sendable {
    let fd: Int32
    private let holders: Atomic<Int>
    private let listening = Atomic<Bool>(true)

    /// Takes ownership of `fd` for `holders` loops.
    init(fd: Int32, holders: Int) {
        self.fd = fd
        self.holders = Atomic(holders)
    }

    /// Whether it still takes connections (false once the drain has begun).
    var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Refuses new connections from now on, and those queued and not yet accepted: `shutdown(2)`
    /// takes a listening socket out of the listening state without closing its descriptor, so a
    /// loop about to `accept` gets `EINVAL`, not someone else's descriptor. Any thread, any number
    /// of times.
    func stopListening() {
        guard listening.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
        else { return }
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// One loop no longer watches the socket; the last one closes it.
    func release() {
        if holders.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            POSIX.closeDescriptor(fd)
        }
    }
}
