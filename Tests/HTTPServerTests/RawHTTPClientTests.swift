import Dispatch
import FlipbookTestSupport
import Foundation
import Glibc
import Testing

/// The raw test client gives back exactly the descriptors it opened: tests that poll a port until
/// a server listens fail to connect many times while other tests of the same process hold files
/// and sockets, and a descriptor closed twice closes one of those (a log file that then loses its
/// lines, a connection that ends without an answer).
@Suite("Raw HTTP test client", .ownThreads)
struct RawHTTPClientTests {
    /// A loopback port that refuses connections (bound, never listening) for as long as `body` runs.
    static func withRefusingPort(_ body: (Int) throws -> Void) throws {
        let refusing = try BoundLoopbackPort()
        try withExtendedLifetime(refusing) { try body(refusing.port) }
    }

    /// Failed connects on one thread while another keeps a file open and checks, each time, that
    /// its descriptor still is that file: a failed connect that closed its number twice would, now
    /// and then, close the other thread's file in between.
    @Test func aFailedConnectClosesOnlyItsOwnSocket() throws {
        try Self.withRefusingPort { port in
            let stop = Flag()
            let refused = Counter()
            let connecting = Thread {
                while !stop.isSet {
                    do {
                        _ = try RawHTTPClient(port: port)
                    } catch {
                        refused.add()
                    }
                }
            }
            connecting.start()
            defer { stop.set() }
            var expected = stat()
            #expect(stat("/dev/null", &expected) == 0)
            // As long as the other thread takes to fail 20,000 connects (and a bounded number of
            // checks, should it stall).
            var checks = 0
            while refused.value < 20_000 && checks < 5_000_000 {
                checks += 1
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                try #require(fd >= 0)
                // Held for a while (a hundred looks at it): the other thread's closes land meanwhile.
                var same = true
                for _ in 0..<100 where same {
                    var found = stat()
                    same = fstat(fd, &found) == 0 && found.st_rdev == expected.st_rdev && found.st_ino == expected.st_ino
                }
                if same { close(fd) }
                try #require(same, "descriptor \(fd) was closed under this thread after \(checks) checks")
            }
            stop.set()
            while !connecting.isFinished { usleep(1000) }
            #expect(refused.value >= 20_000, "the connects did fail: \(refused.value)")
        }
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    func add() { lock.lock(); count += 1; lock.unlock() }
}
