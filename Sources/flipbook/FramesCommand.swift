import AnimatedImage
import ArgumentParser
import Dispatch
import FlipbookService
import FoundationEssentials
import Glibc
import Synchronization
import SystemPackage
import SystemResources

/// `flipbook frames FILE --output DIR`: every composited frame as `DIR/frame_NNNN.png`, or in a
/// rendition (`--width 320 --format webp`: `frame_NNNN.webp`, the bytes the service serves).
///
/// Frames are composited in order on this thread while scaling and encoding (most of the work)
/// run on the other cores, with a bounded number of frames in flight.
struct FramesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frames", abstract: "Write every composited frame as PNG (or WebP) files.",
        discussion: "The files are named frame_0000.png, frame_0001.png, … (.webp or .avif with --format).")

    @OptionGroup var input: ImageInput

    @OptionGroup var output: OutputDirectory

    @OptionGroup var rendition: RenditionOptions

    func run() throws {
        let (image, target) = try rendition.open(input)
        output.create()
        // Frames are rendered in order, each decoded once: checkpoints would only cost copies.
        let renderer = FrameRenderer(image: image, checkpointBudget: 0)
        let encoder = rendition.encoder
        let failures = FailureBox()
        let progress = Progress(total: image.frameCount)
        // Scaling and encoding on threads of their own, one per usable core (libdispatch's pool
        // ran them on one core of two: CPU time equal to wall time, bench-renditions).
        let workers = EncodeWorkers(threads: max(1, CPULimit.usableCores), capacity: max(2, CPULimit.usableCores * 2))
        for i in 0..<image.frameCount {
            let canvas: Canvas
            do {
                canvas = try renderer.render(i)
            } catch let error as AnimatedImageError {
                // Like a browser, stop at the first frame that does not decode.
                if case .frameDecodeFailed = error, i > 0 {
                    StandardStreams.write("flipbook: \(input.file): \(error); stopping after \(i) frames\n", to: STDERR_FILENO)
                    break
                }
                input.refuse(error)
            }
            let digits = String(i)  // frame_0000.png …
            let name = "frame_" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "." + target.format.rawValue
            let path = output.file(name)
            workers.submit {
                do {
                    let bytes = try encoder.encode(canvas, as: target, colorSpace: image.colorSpace)
                    try writeFrameFile(bytes, to: path)
                } catch {
                    failures.record("cannot write \(path): \(error)")
                }
                progress.step()
            }
        }
        workers.finish()
        progress.finish()
        if let message = failures.first { fail(message, status: CLIExit.ioFailure) }
    }
}

/// Writes one frame's PNG with plain system calls (swift-system's `writeAll` retries short writes
/// and `EINTR`). Foundation's `Data.write(to:)` fsyncs every file, which cost more wall-clock
/// time than encoding the frame.
private func writeFrameFile(_ bytes: [UInt8], to path: String) throws {
    let fd = try FileDescriptor.open(
        FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
        permissions: [.ownerReadWrite, .groupReadWrite, .otherReadWrite])
    try fd.closeAfter { _ = try fd.writeAll(bytes) }
}

/// Threads that run submitted jobs in order of submission, at most `capacity` waiting (the
/// submitter blocks beyond it, so rendered canvases never pile up).
private final class EncodeWorkers: @unchecked Sendable {
    private let condition = ConditionLock()
    private var jobs: [@Sendable () -> Void] = []
    private var closed = false
    private var running: Int
    private let capacity: Int

    init(threads: Int, capacity: Int) {
        self.capacity = capacity
        running = threads
        for n in 0..<threads {
            DetachedThread.start(name: "flipbook-frames-\(n)") { [self] in work() }
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        while jobs.count >= capacity { condition.wait() }
        jobs.append(job)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every submitted job has run and the threads have ended.
    func finish() {
        condition.lock()
        closed = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !closed { condition.wait() }
            if jobs.isEmpty {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.broadcast()
            condition.unlock()
            job()
        }
    }
}

/// The first failure among concurrent encode jobs.
private final class FailureBox: Sendable {
    private let message = Mutex<String?>(nil)
    func record(_ text: String) { message.withLock { $0 = $0 ?? text } }
    var first: String? { message.withLock { $0 } }
}

/// A one-line progress counter on stderr, shown only when stderr is a terminal.
private final class Progress: Sendable {
    private let total: Int
    private let enabled = isatty(2) != 0
    private let done = Mutex(0)

    init(total: Int) { self.total = total }

    func step() {
        guard enabled else { return }
        let n = done.withLock {
            $0 += 1; return $0
        }
        if n == total || n % 10 == 0 {
            StandardStreams.write("\rframes: \(n)/\(total)", to: STDERR_FILENO)
        }
    }

    func finish() {
        if enabled { StandardStreams.write("\n", to: STDERR_FILENO) }
    }
}
