import AnimatedImage

/// A composite is encoded for every rendition that wants it (``FrameCache``'s `make`), the
/// renditions with a waiting request first; each rendition is stored and handed to its waiting
/// requests the moment its own encode is done, not when the slowest of the batch is. Ten
/// renditions of a 480×270 frame cost 2 to 14 ms each (lossless WebP at 360 px the most): a
/// player of the 160-px PNG no longer waits ~30 ms for the lossless WebPs made beside it.
extension FrameCache {
    /// The order in which `targets`' encodes of frame `index` are handed out: those someone waits
    /// for first (in their order), then the others. Under the lock.
    func encodeOrder(of targets: [ImageEntry], index: Int) -> [Int] {
        let waited = targets.indices.filter { targets[$0].waiting[index] != nil }
        return waited + targets.indices.filter { targets[$0].waiting[index] == nil }
    }

    /// Stores `frame`, `target`'s rendition of the job's frame, when it is to be kept and there
    /// is room, and answers the requests waiting for it (outside the lock). A frame not stored
    /// here is tried again, and counted, when the job finishes (``finish(_:_:)``).
    func answerEarly(_ frame: CachedFrame, for target: ImageEntry, of job: CachePolicy.Job) {
        let now = clock.seconds()
        lock.lock()
        guard state.entries[target.id] === target else {
            lock.unlock()
            return
        }
        let waiters = target.takeWaiters(for: job.index)
        state.waitingRequests -= waiters.count
        if state.askedForSincePurge(job.entry), target.frames[job.index] == nil {
            _ = storeIfRoom(frame, in: target, of: job, now: now)
        }
        let returnMemory = state.freed.isDue(now: now)
        lock.unlock()
        if returnMemory { FreedMemory.returnToKernel() }
        guard !waiters.isEmpty else { return }
        let answer = Result<EncodedFrame, FrameCacheError>.success(frame.encoded(job.index))
        for completion in waiters { completion(answer) }
    }
}
