import AnimatedImage
import FoundationEssentials
import Glibc
import SystemResources

/// The decode threads: take a job under the lock, render and encode outside it — the canvas once,
/// encoded for every rendition of the image that wants the frame — then store the frames, answer
/// their waiters and either go on with the same image (a short run in playback order) or hand
/// the image back.
extension FrameCache {
    func startWorkers() {
        lock.lock()
        runningWorkers = configuration.decodeThreads
        lock.unlock()
        for n in 0..<configuration.decodeThreads {
            DetachedThread.start(name: "flipbook-decode-\(n)", niceOffset: Self.decodeThreadNiceOffset) {
                [self] in self.workerLoop()
            }
        }
    }

    /// What a thread holds while it works on an image: the entry is busy, and its image and
    /// renderer are this thread's alone until they are handed back under the lock.
    struct Work {
        var job: CachePolicy.Job
        var image: AnimatedImage?
        var renderer: FrameRenderer?
        var checkpointAllowance: Int
        /// A large job: counted in ``FrameCache/largeJobs`` until the run ends.
        var large: Bool
        /// Frames made in this run of the same image.
        var run = 0
        /// Frames made since the last one someone waited for in this run (nil: none was).
        var sinceWaited: Int? = nil
    }

    /// The result of one frame's work.
    struct Made {
        /// One per target of the job (``CachePolicy/Job/entry`` first, then ``CachePolicy/Job/also``).
        var frames: [Result<CachedFrame, FrameCacheError>]
        var framesDecoded = 0
        var resumed = false
        var seconds = 0.0
        /// Whether the job is in the cache's counters already.
        var counted = false
    }

    /// How far the decode threads' nice value sits above the process's (the event loops'): on
    /// busy cores a ready answer (microseconds) does not wait behind decode-ahead (milliseconds),
    /// while decoding still gets every idle cycle (measured: BENCHMARKS.md, "Playback through the
    /// frame cache").
    static let decodeThreadNiceOffset: Int32 = 10

    private func workerLoop() {
        while runJobs() {
            // The run let go of its image, decoder and entries when `runJobs` returned: only now
            // is the thread idle (``waitUntilIdle(timeout:)``), every answer of its run sent.
            lock.lock()
            activeJobs -= 1
            lock.broadcast()
            lock.unlock()
        }
        lock.lock()
        runningWorkers -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// Takes a job (blocking until there is one) and makes it and the run that follows it on the
    /// same image; false when shutting down.
    private func runJobs() -> Bool {
        guard var work = takeWork() else { return false }
        while true {
            let made = make(&work)
            let index = work.job.index
            let (answers, next) = finish(&work, made)
            for (waiters, frame) in answers {
                let result = frame.map { $0.encoded(index) }
                for completion in waiters { completion(result) }
            }
            guard let next else { return true }
            work.sinceWaited = work.job.urgent ? 0 : work.sinceWaited.map { $0 + 1 }
            work.job = next
            work.run += 1
        }
    }

    /// Blocks until there is work; nil when shutting down.
    private func takeWork() -> Work? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if shuttingDown { return nil }
            let now = clock.seconds()
            // Images whose active time passed go idle here, a few per job, many when there is
            // nothing else to do: never on a request's time.
            state.expire(now: now, atMost: state.policy.tuning.expiriesPerJob)
            refreshWindowsIfDue(now: now)
            let largeAllowed = largeJobs < max(1, configuration.decodeThreads - 1)
            if let job = state.nextJob(now: now, largeAllowed: largeAllowed) {
                activeJobs += 1
                let large = state.policy.isLarge(job.entry, in: state)
                if large { largeJobs += 1 }
                // Beside the image's decoder: a renderer of the job's own, keeping nothing.
                return Work(
                    job: job, image: job.entry.image, renderer: job.beside ? nil : job.entry.renderer,
                    checkpointAllowance: job.beside ? 0 : checkpointAllowance(), large: large)
            }
            if state.expire(now: now, atMost: state.policy.tuning.expiriesWhenIdle) {
                // More to expire: a millisecond for the requests the lock held up, then on.
                lock.wait(seconds: 0.001)
                continue
            }
            // Re-check now and then: windows regrow with time after memory pressure; a one-off
            // request held back while players are about (``CachePolicy/holdsBack(_:in:now:)``) is due when
            // its patience runs out.
            lock.wait(seconds: state.waitingRequests > 0 ? 0.02 : 0.5)
        }
    }

    /// Renders the job's frame and encodes it for each of its targets (outside the lock).
    private func make(_ work: inout Work) -> Made {
        let started = SystemMonotonicClock().nanoseconds()
        var targets = [work.job.entry] + work.job.also
        var made = Made(frames: targets.map { _ in .failure(.decodeFailed("not attempted")) })
        do {
            let image = try work.image ?? loadImage(work.job.entry)
            work.image = image
            guard work.job.index < image.frameCount else {
                throw FrameCacheError.frameOutOfRange(index: work.job.index, frameCount: image.frameCount)
            }
            // Renditions asked for while the image loaded share the composite (and size the
            // encodes that run at once).
            lock.lock()
            if !work.job.beside { work.job.also = state.policy.renditionsWanting(work.job.entry, work.job.index, in: state) }
            // A cached full-size frame to resume from, known now that the image is loaded (the
            // first request of a new upload finds its seek anchors this way).
            work.job.resume = work.job.entry.source.exactEntry?.resumePoint(before: work.job.index, in: image)
            lock.unlock()
            // What this render and encode will allocate is reserved first (waiting while the
            // decode-memory budget is spent); given back when the frame is made.
            let plan = try decodeMemoryPlan(for: work, image: image)
            defer { plan.reservation?.release() }
            let renderer =
                work.renderer
                ?? FrameRenderer(
                    image: image, checkpointInterval: configuration.checkpointInterval,
                    checkpointBudget: work.checkpointAllowance)
            work.renderer = renderer
            renderer.checkpointBudget = min(work.checkpointAllowance, renderer.checkpointBytes + plan.checkpointBytes)
            let before = renderer.decodeCount
            // Nothing cached to resume from and a long replay ahead (a cold start after a
            // restart): a frame kept outside the cache may do (read from disk, about one decode).
            if work.job.resume == nil, plan.mayResume, let seekAnchor = work.job.entry.source.seekAnchor,
                renderer.framesToDecode(for: work.job.index) > configuration.checkpointInterval,
                let kept = seekAnchor(work.job.index)
            {
                work.job.resume = (kept.frame, FrameBytes(kept.png))
            }
            // Restoring the canvas from a cached frame's PNG costs about one frame decode.
            if plan.mayResume, let resume = work.job.resume, renderer.canResume(after: resume.frame),
                renderer.framesToDecode(for: work.job.index) > work.job.index - resume.frame + 1,
                (try? renderer.resume(after: resume.frame, png: resume.png.array)) != nil
            {
                made.resumed = true
            }
            let canvas = try renderer.render(work.job.index)
            made.framesDecoded = renderer.decodeCount - before
            // Renditions asked for while the canvas was made share it too.
            lock.lock()
            if !work.job.beside { work.job.also = state.policy.renditionsWanting(work.job.entry, work.job.index, in: state) }
            targets = [work.job.entry] + work.job.also
            let order = encodeOrder(of: targets, index: work.job.index)
            // Counted before any answer goes out (``answerEarly(_:for:of:)``).
            count(work.job, made)
            made.counted = true
            lock.unlock()
            let job = work.job
            made.frames = encodeInParallel(targets.count, lanes: plan.encodeLanes, order: order) { i in
                let frame = Result { try encode(canvas, for: targets[i], index: job.index, colorSpace: image.colorSpace) }
                    .mapError(Self.cacheError)
                if case .success(let frame) = frame { answerEarly(frame, for: targets[i], of: job) }
                return frame
            }
        } catch {
            made.frames = targets.map { _ in .failure(Self.cacheError(error)) }
        }
        made.seconds = Double(SystemMonotonicClock().nanoseconds() - started) / 1e9
        return made
    }

    /// `count` results of `body`, made on up to `lanes` threads at once: this one and the cache's
    /// encode helpers (``EncodeHelpers``, at the decode threads' nice value, so a ready answer
    /// still does not wait behind them), each taking the next index not taken in `order` (the
    /// encodes of one frame differ a lot in cost: a full-size lossless WebP is ten small PNGs).
    private func encodeInParallel(
        _ count: Int, lanes: Int, order: [Int], _ body: (Int) -> Result<CachedFrame, FrameCacheError>
    ) -> [Result<CachedFrame, FrameCacheError>] {
        let slots = EncodeSlots(count: count)
        if min(lanes, count) > 1 {
            encodeHelpers.run(count, lanes: lanes) { n in slots.set(order[n], body(order[n])) }
        } else {
            for i in order { slots.set(i, body(i)) }
        }
        return slots.results
    }

    /// The canvas as `target`'s rendition, kept where frames are kept: in the memory file when
    /// there is room (sendfile), else on the heap. What the client keeps with the frame is made
    /// here too, off the lock and the loops.
    private func encode(_ canvas: Canvas, for target: ImageEntry, index: Int, colorSpace: ColorSpaceChunks) throws
        -> CachedFrame
    {
        let encoded = try encoder.encode(canvas, as: target.rendition, colorSpace: colorSpace)
        let bytes = arena.flatMap { arena in encoded.withUnsafeBytes { arena.store($0) } } ?? FrameBytes(encoded)
        return CachedFrame(bytes: bytes, attachment: target.prepare?(index, bytes))
    }

    private static func cacheError(_ error: any Error) -> FrameCacheError {
        switch error {
        case let error as FrameCacheError: return error
        case let error as AnimatedImageError: return .decodeFailed(error.description)
        default: return .decodeFailed("\(error)")
        }
    }

    /// What a job reserves from the decode-memory budget, and what that allows it.
    struct DecodeMemoryPlan {
        var reservation: DecodeReservation?
        /// Encodes of the composite that may run at once (their working memory is reserved).
        var encodeLanes = 1
        /// New checkpoints the render may keep, in bytes.
        var checkpointBytes: Int
        /// Whether restoring the canvas from a PNG (a second canvas for a moment) was reserved.
        var mayResume: Bool
    }

    /// Reserves the job's decoding memory (``AnimatedImage/decodeMemory``): the render and encode,
    /// a canvas when the job makes a renderer, another when it may restore one from a PNG, and
    /// the checkpoints it may keep (up to its allowance). The extras are left out when the budget
    /// could never hold them with the rest. Without a budget, nothing is reserved or limited.
    private func decodeMemoryPlan(for work: Work, image: AnimatedImage) throws -> DecodeMemoryPlan {
        // Encodes at once: one per rendition known to want the frame, up to the setting.
        let lanes = max(1, min(configuration.encodeThreadsPerFrame, 1 + work.job.also.count))
        guard let budget = configuration.decodeBudget else {
            return DecodeMemoryPlan(
                reservation: nil, encodeLanes: lanes, checkpointBytes: work.checkpointAllowance, mayResume: true)
        }
        let memory = image.decodeMemory
        // Scaling and encoding for the renditions: the largest of them (more below when several
        // run at once).
        let base = memory.renderBytes + work.job.renditionWorkBytes + (work.renderer == nil ? memory.canvasBytes : 0)
        let resume = work.job.resume == nil ? 0 : memory.canvasBytes
        let replayed =
            work.renderer?.framesToDecode(for: work.job.index)
            ?? work.job.index - image.dependencies.replayStart(atOrBefore: work.job.index) + 1
        let held = work.renderer?.checkpointBytes ?? 0
        let checkpoints = min(
            max(0, work.checkpointAllowance - held),
            (replayed / configuration.checkpointInterval + 1) * memory.canvasBytes)
        var plan = DecodeMemoryPlan(reservation: nil, checkpointBytes: 0, mayResume: false)
        var bytes = base
        // Each further encode at once scales and encodes beside the first.
        let extraLanes = (lanes - 1) * work.job.renditionWorkBytes
        if extraLanes > 0 && bytes + extraLanes <= budget.capacityBytes {
            bytes += extraLanes
            plan.encodeLanes = lanes
        }
        if bytes + resume <= budget.capacityBytes {
            bytes += resume
            plan.mayResume = true
        }
        if bytes + checkpoints <= budget.capacityBytes {
            bytes += checkpoints
            plan.checkpointBytes = checkpoints
        }
        do {
            plan.reservation = try budget.reserve(bytes)
        } catch .tooLarge(let needed, let capacity) {
            throw FrameCacheError.decodeFailed(
                "rendering a frame of this image needs \(needed) bytes of decode memory, "
                    + "more than limits.maxDecodeBytes (\(capacity))")
        } catch .queueFull {
            throw FrameCacheError.queueFull(retryAfterSeconds: 1)
        } catch .closed {
            throw FrameCacheError.shuttingDown
        }
        return plan
    }

    private func loadImage(_ entry: ImageEntry) throws -> AnimatedImage {
        do {
            return try entry.source.load()
        } catch let error as AnimatedImageError {
            throw FrameCacheError.loadFailed(error.description)
        } catch {
            throw FrameCacheError.loadFailed("\(error)")
        }
    }
}
