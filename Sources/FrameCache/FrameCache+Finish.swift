import AnimatedImage
import SystemResources

/// What a decode thread does with a frame it made, under the cache's lock: counts the work,
/// hands the image's decoder back, stores the frames and answers their waiters, asks the policy
/// whether the run goes on, and keeps the budget when the image is released. Each step is one
/// function.
extension FrameCache {
    /// Waiting requests and what they get: the answer for each target of a job.
    typealias Answers = [([ImageEntry.Completion], Result<CachedFrame, FrameCacheError>)]

    /// Takes the job's results in under the lock: counts the work, hands the image and its decoder
    /// back, stores the frames and takes their waiters, then asks the policy whether the run goes
    /// on — if not, the image is released and the budget kept. Returns each target's waiters
    /// with its frame, and the next job of the run, if any.
    func finish(_ work: inout Work, _ made: Made) -> (Answers, CachePolicy.Job?) {
        metrics.decoded(seconds: made.seconds)
        let entry = work.job.entry
        let now = clock.seconds()
        lock.lock()
        if !made.counted { count(work.job, made) }
        if work.job.beside { entry.source.besideJob = nil }
        var answers: Answers = []
        var next: CachePolicy.Job? = nil
        if state.sources[entry.source.id] === entry.source || state.entries[entry.id] === entry {
            if entry.source.timestampsMs == nil, let image = work.image {
                entry.source.learnTiming(of: image)
                state.reindex(entry.source)  // its delays are known now: its deadlines move
            }
            // A decoder beside the image's keeps nothing: it goes with the job.
            if !work.job.beside { handBackDecoder(work, keeps: !isLarge(entry), keepsFrames: state.askedForSincePurge(entry)) }
            answers = storeFrames(of: work.job, made.frames, now: now)
            next = nextInRun(after: work, made, now: now)
            if next == nil && !work.job.beside {
                entry.source.busy = false
                // Hits moved its playheads meanwhile without the lock: placed again.
                state.reindex(entry.source)
                keepWithinBudget(entry, now: now)
            }
        } else if !work.job.beside {
            entry.source.busy = false  // removed while it was decoded: nothing of it is kept
        }
        endJob(work, continuing: next != nil, now: now)
        return (answers, next)
    }

    /// Counts a job's work in the cache's counters (under the lock).
    func count(_ job: CachePolicy.Job, _ made: Made) {
        state.counters.decodes += 1
        state.counters.framesDecoded += made.framesDecoded
        state.counters.sharedRenders += job.also.count
        if made.resumed { state.counters.resumes += 1 }
        if !job.urgent { state.counters.prefetches += 1 }
    }

    /// A decoder whose canvas is larger than the cache plans for is not kept (see
    /// ``CacheState/largestPlannedCanvas``): counted, it would only evict every image's frames
    /// before being dropped. Its next job makes (and reserves) a canvas again.
    private func isLarge(_ entry: ImageEntry) -> Bool { state.policy.isLarge(entry, in: state) }

    /// Stores each target's frame where there is room and takes the requests waiting for it; a
    /// frame that cannot be made fails the requests for that rendition's later frames too.
    /// Frames made across a purge are not kept unless the image was asked for since (the answer
    /// still goes to whoever waited for it).
    private func storeFrames(
        of job: CachePolicy.Job, _ frames: [Result<CachedFrame, FrameCacheError>], now: Double
    ) -> Answers {
        var answers: Answers = []
        let keep = state.askedForSincePurge(job.entry)
        for (target, frame) in zip([job.entry] + job.also, frames) where state.entries[target.id] === target {
            let waiters = target.takeWaiters(for: job.index)
            state.waitingRequests -= waiters.count
            answers.append((waiters, frame))
            switch frame {
            case .success where !keep || target.frames[job.index] != nil:
                break  // not kept, or stored as soon as it was encoded (``answerEarly(_:for:of:)``)
            case .success(let frame):
                if !storeIfRoom(frame, in: target, of: job, now: now) {
                    state.counters.uncacheable += 1
                    if !job.urgent && target === job.entry { target.prefetchStalled = true }
                }
            case .failure(let error):
                for i in target.waitOrder where i > job.index {
                    let more = target.takeWaiters(for: i)
                    state.waitingRequests -= more.count
                    answers.append((more, .failure(error)))
                }
            }
        }
        return answers
    }

    /// Stores `frame` as `target`'s frame of the job when room can be made for it (evicting
    /// posters too under critical pressure); false when it does not fit. Under the lock.
    func storeIfRoom(_ frame: CachedFrame, in target: ImageEntry, of job: CachePolicy.Job, now: Double) -> Bool {
        let reach: CachePolicy.EvictionReach = pressure.level(at: now) == .critical ? .posters : .outsideWindows
        guard state.makeRoom(for: frame.count, reach: reach, protecting: target, keep: job.index, now: now) else {
            return false
        }
        state.store(frame, in: target, at: job.index)
        return true
    }

    /// The next job of the run, as the policy says (``CachePolicy/continuation(of:in:now:)``),
    /// when the run may go on at all: the frame was made, the decoder is the image's own and
    /// kept, and the budget holds with it.
    private func nextInRun(after work: Work, _ made: Made, now: Double) -> CachePolicy.Job? {
        let entry = work.job.entry
        guard case .success = made.frames[0], !shuttingDown, !work.job.beside, !isLarge(entry),
            state.entries[entry.id] === entry, fitsAfterMakingRoom(for: entry, now: now)
        else { return nil }
        let run = CachePolicy.Run(
            held: entry, frames: work.run + 1, sinceWaited: work.job.urgent ? 0 : work.sinceWaited.map { $0 + 1 })
        return state.policy.continuation(of: run, in: state, now: now)
    }

    /// The end of a job's bookkeeping: the large-job count (when the run ends), the metrics,
    /// and freed memory handed back; wakes every thread waiting on the lock and lets it go.
    private func endJob(_ work: Work, continuing: Bool, now: Double) {
        // The thread's job count drops when it has let the run go (``FrameCache``'s `workerLoop`).
        if !continuing && work.large { largeJobs -= 1 }
        let held = state.heldBytes
        let depth = state.waitingRequests
        let returnMemory = state.freed.isDue(now: now)
        lock.broadcast()
        lock.unlock()
        if returnMemory { FreedMemory.returnToKernel() }
        metrics.bytes(held)
        metrics.queueDepth(depth)
    }

    /// Gives the job's renderer back to its image (unless `keeps` is false: a large canvas), as
    /// purges during the job asked: checkpoints discarded, or the decoder dropped when the
    /// image was not asked for since (`keepsFrames` false); and accounts what it holds.
    private func handBackDecoder(_ work: Work, keeps: Bool, keepsFrames: Bool) {
        let entry = work.job.entry
        let source = entry.source
        source.renderer = keeps ? work.renderer : nil
        if source.discardCheckpointsAfterJob {
            work.renderer?.discardCheckpoints()
            source.discardCheckpointsAfterJob = false
        }
        if source.dropRendererAfterJob {
            source.dropRendererAfterJob = false
            if !keepsFrames { source.renderer = nil }
        }
        state.updateRendererBytes(entry)
    }

    /// True when the budget holds with this image's decoder kept, after evicting what nobody
    /// is about to need.
    private func fitsAfterMakingRoom(for entry: ImageEntry, now: Double) -> Bool {
        state.makeRoom(for: 0, reach: .outsideWindows, protecting: entry, now: now)
    }

    /// After a run the decoder's canvas, checkpoints and image count against the budget; when they
    /// do not fit, checkpoints go first, then the decoder itself (it resumes from a cached frame
    /// next time), and as a last resort frames in windows and posters, then the rendition's own
    /// record when it holds nothing — the budget is never exceeded.
    private func keepWithinBudget(_ entry: ImageEntry, now: Double) {
        if fitsAfterMakingRoom(for: entry, now: now) { return }
        if let renderer = entry.renderer, renderer.checkpointBytes > 0 {
            renderer.discardCheckpoints()
            state.updateRendererBytes(entry)
            if state.heldBytes <= state.holdLimit { return }
        }
        state.dropRenderer(entry)
        if state.heldBytes > state.holdLimit {
            state.makeRoom(for: 0, reach: .posters, protecting: nil, now: now)
        }
        // A budget too small even for the rendition's own record: it goes too, holding nothing.
        if state.heldBytes > state.holdLimit, state.entries[entry.id] === entry, state.isForgettable(entry) {
            state.forget(entry)
        }
    }
}
