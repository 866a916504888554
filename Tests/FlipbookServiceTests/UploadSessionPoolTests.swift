import Dispatch
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService

/// An upload session's waiting requests are answered while Dispatch's shared pool is busy. That
/// pool holds about one thread per core and adds one a second at most, so work queued on it (the
/// global queues, and every queue made with `.concurrent`) waits behind whatever holds it: CPU-
/// bound ingests and builds, a blocked storage call. Under load, upload waits queued there went
/// unanswered for minutes. Run in a process of its own (an exit test): holding the pool stalls
/// every task of the process, so it must not stall the other suites.
@Suite("Upload sessions beside a busy Dispatch pool", .ownThreads)
struct UploadSessionPoolTests {
    @Test func waitsProgressAndIndexingDoNotWaitForTheSharedPool() async {
        await #expect(processExitsWith: .success) {
            // Recorded, not thrown, so the parent is told what failed (an error thrown out of the
            // body ended the child with SIGILL and no message).
            do { try await UploadSessionPoolTests.answeredWhileThePoolIsHeld() } catch { Issue.record(error) }
        }
    }

    static func answeredWhileThePoolIsHeld() async throws {
        let service = try UploadSessionTests.service()
        let bytes = try Corpus.bytes(UploadSessionTests.gif)
        let id = try UploadSessionTests.createSession(service)
        let connection = try UploadSessionTests.startPut(service, id, length: bytes.count)
        try await UploadSessionTests.sendSlice(service, connection, id, bytes[0..<3000], total: 3000)
        let frames = try UploadSessionTests.progress(service, id).frames
        try #require(frames >= 1 && frames < 14)

        try whileThePoolIsHeld(service, id, connection, bytes, frames: frames)
        try connection.send(Array(bytes[(bytes.count - 1)...]))
        #expect(try connection.readResponse().status == 201)
        await service.stop()
    }

    /// The requests, all while the pool is held: everything blocks on this thread and never
    /// suspends, as no task of this process would be resumed then.
    static func whileThePoolIsHeld(
        _ service: TestService, _ id: String, _ connection: RawHTTPClient, _ bytes: [UInt8], frames: Int
    ) throws {
        let pool = HeldDispatchPool()
        defer { pool.release() }
        var client = service.client
        client.timeoutSeconds = 20  // a wait that would not end in time fails the test there
        // A wait that runs out: 503 after its second, not when the pool lets go.
        let start = Date()
        let late = try client.get("/frames/\(id)/\(frames + 1)", headers: ["Prefer": "wait=1"])
        #expect(late.status == 503 && Date().timeIntervalSince(start) < 10)
        // A waiter answered when its bytes land (the prefix is indexed while the pool is held).
        let waiter = ThreadRequest(client, "/frames/\(id)/\(frames)", headers: ["Prefer": "wait=600"])
        for _ in 0..<1000 where service.server.uploads.waiting.load(ordering: .relaxed) < 1 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try connection.send(Array(bytes[3000..<(bytes.count - 1)]))
        let answered = try waiter.answer(within: 20)
        #expect(answered.status == 200 && answered.header("X-Frame-Index") == String(frames))
        // Progress polls are answered too, from an index of every byte received.
        let progress = try client.get("/uploads/\(id)")
        #expect(progress.status == 200 && progress.json["bytesReceived"] as? Int == bytes.count - 1)
        #expect(pool.isStillHeld, "an item queued after the blockers ran: the pool was not held throughout")
    }
}

/// Holds every thread of Dispatch's shared pool at each QoS a service queues work at: blocked
/// items queued ahead of everything else, more of them than the pool can add threads for
/// (one a second) while a test runs. A probe queued behind them tells whether any item after
/// them could run.
final class HeldDispatchPool: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private let probesRun = Atomic(0)
    private let released = Atomic(false)

    init(blockersPerQueue: Int = 60) {
        for qos in [DispatchQoS.QoSClass.userInteractive, .userInitiated, .default, .utility] {
            for _ in 0..<blockersPerQueue {
                DispatchQueue.global(qos: qos).async { [self] in
                    gate.wait()
                    gate.signal()  // the next blocker goes too
                }
            }
            DispatchQueue.global(qos: qos).async { [self] in probesRun.add(1, ordering: .relaxed) }
        }
    }

    /// No item queued after the blockers has run.
    var isStillHeld: Bool { probesRun.load(ordering: .relaxed) == 0 }

    /// Lets the blockers go (once).
    func release() {
        if !released.exchange(true, ordering: .relaxed) { gate.signal() }
    }
}

/// A request sent on a thread of its own (not a task: none would run while the pool is held),
/// its answer awaited by blocking.
final class ThreadRequest: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<HTTPTestResponse, any Error>?>(nil)

    init(_ client: HTTPTestClient, _ path: String, headers: [String: String]) {
        Thread.detachNewThread { [self] in
            let answer = Result { try client.get(path, headers: headers) }
            result.withLock { $0 = answer }
            done.signal()
        }
    }

    func answer(within seconds: Double) throws -> HTTPTestResponse {
        guard done.wait(timeout: .now() + seconds) == .success, let answer = result.withLock({ $0 }) else {
            throw TestFailure("no answer within \(seconds) s")
        }
        return try answer.get()
    }
}
