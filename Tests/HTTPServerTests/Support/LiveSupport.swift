import Dispatch
import FlipbookTestSupport
import Foundation
import Glibc
import Synchronization

@testable import HTTPServer

/// FNV-1a (64-bit) of some bytes, to compare uploaded bodies with what the server received.
func fnv1a(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
    var hash = seed
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01B3
    }
    return hash
}

func fnv1a(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { fnv1a($0) } }

/// Counts and hashes a streamed body; answers `<count> <hash>` when it ends.
final class HashingSink: HTTPBodySink {
    private var count = 0
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    private let log: FailureLog?

    init(log: FailureLog? = nil) { self.log = log }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        count += chunk.count
        hash = fnv1a(chunk, seed: hash)
    }

    func finish() -> HTTPHandlerResult {
        .now(HTTPResponse(text: "\(count) \(hash)"))
    }

    func fail(_ reason: HTTPBodyFailure) {
        log?.failures.withLock { $0.append(reason) }
    }
}

/// A response hook that adds the header lines it is given and records every response it is told
/// about, in order.
final class RecordingHook: HTTPResponseHook {
    let constantHeaderLines: [UInt8]
    private let records = Mutex<[HTTPAccessRecord]>([])

    init(constantLines: String = "") {
        constantHeaderLines = Array(constantLines.utf8)
    }

    func appendHeaderLines(for record: HTTPAccessRecord, to head: inout [UInt8]) {
        head += Array("X-Seen-Status: \(record.status)\r\n".utf8)
    }

    func responseQueued(_ record: HTTPAccessRecord) {
        records.withLock { $0.append(record) }
    }

    var all: [HTTPAccessRecord] { records.withLock { $0 } }
}

/// Records streamed-body failures across threads (the sink runs on an event-loop thread).
final class FailureLog: Sendable {
    let failures = Mutex<[HTTPBodyFailure]>([])
    var all: [HTTPBodyFailure] { failures.withLock { $0 } }
}

/// The routes the live tests talk to.
///
/// - `GET /hello` → `hello`, with `X-Connection` and `X-Request-Number`.
/// - `GET /later/:ms` → `.later`, answered `later <ms>` from a Dispatch thread after `ms` ms.
/// - `POST /echo` (collected, ≤ 64 MiB) → `<count> <hash>` of the body.
/// - `PUT /upload` (streamed, ≤ 64 MiB) → `<count> <hash>` of the body.
/// - `PUT /small` (streamed, ≤ 100 bytes).
func liveRouter(failures: FailureLog = FailureLog()) -> Router {
    var router = Router()
    router.get("/hello") { request, _ in
        var response = HTTPResponse(text: "hello")
        response.headers.add(name: "X-Connection", value: "\(request.connectionID)")
        response.headers.add(name: "X-Request-Number", value: "\(request.requestNumber)")
        return .now(response)
    }
    router.get("/later/:ms") { request, responder in
        let ms = Int(request.pathParameters["ms"] ?? "") ?? 0
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) {
            responder.respond(HTTPResponse(text: "later \(ms)"))
        }
        return .later
    }
    router.get("/echo-path/:value") { request, _ in
        .now(
            HTTPResponse(
                text: "\(request.pathParameters["value"] ?? "-")|\(request.path)|"
                    + request.queryItems.map { "\($0.name)=\($0.value)" }.joined(separator: "&")))
    }
    router.post("/echo", maxBodyBytes: 64 << 20) { request, _ in
        .now(HTTPResponse(text: "\(request.body.count) \(fnv1a(request.body))"))
    }
    router.stream(.PUT, "/upload", maxBodyBytes: 64 << 20) { _, _ in HashingSink(log: failures) }
    router.stream(.PUT, "/small", maxBodyBytes: 100) { _, _ in HashingSink(log: failures) }
    return router
}

/// A deterministic pseudo-random byte string.
func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var out = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        out[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return out
}

/// What a finished `curl` run printed.
struct CurlResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Whether a `curl` binary is on the PATH.
func curlPath() -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(directory)/curl"
        if access(path, X_OK) == 0 { return path }
    }
    return nil
}

/// Runs `curl` with `arguments` (blocking) and collects its output.
func runCurl(_ arguments: [String]) throws -> CurlResult {
    guard let path = curlPath() else {
        throw TestFailure("curl is not installed (scripts/install-deps.sh topology installs it)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes before waiting so that a chatty curl never blocks on a full pipe.
    let errData = Mutex(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        let data = err.fileHandleForReading.readDataToEndOfFile()
        errData.withLock { $0 = data }
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return CurlResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
}

/// Runs `body` and waits for it at most `seconds`: false when it has not finished by then, so a
/// test that would hang fails instead (the bound is never the thing asserted).
func finishes(within seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let done = DoneFlag()
    Task {
        await body(); done.value.store(true, ordering: .releasing)
    }
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !done.value.load(ordering: .acquiring), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
    return done.value.load(ordering: .acquiring)
}

/// Set once by whoever finishes.
final class DoneFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Waits (polling) until `condition` holds or `seconds` pass; returns whether it held.
func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
