import AnimatedImage

/// Frames made before their image has an id: an upload in progress composites its frames from
/// the bytes received so far, and the finished image serves the same bytes. They are staged
/// here under the upload's key (CacheState+Staging) — so readers of the upload share them — and,
/// when the upload is stored, adopted as the stored image's frames, so its first readers find
/// them cached instead of decoding them again.
extension FrameCache {
    /// Frame `index` of `rendition` staged by `owner`, if the cache holds it.
    public func stagedFrame(owner: String, rendition: FrameRendition, index: Int) -> FrameBytes? {
        lock.lock()
        defer { lock.unlock() }
        return state.stagedFrame(owner: owner, rendition: rendition, index: index)
    }

    /// Stages `encoded` as frame `index` of `owner`'s `rendition` (in the memory file when there
    /// is room) if it fits without evicting anything wanted; returns the bytes to serve either way.
    @discardableResult
    public func stage(_ encoded: [UInt8], owner: String, rendition: FrameRendition, index: Int) -> FrameBytes {
        let bytes = arena.flatMap { arena in encoded.withUnsafeBytes { arena.store($0) } } ?? FrameBytes(encoded)
        let now = clock.seconds()
        lock.lock()
        if !shuttingDown, !state.stage(bytes, owner: owner, rendition: rendition, index: index, now: now) {
            state.counters.uncacheable += 1
        }
        let held = state.heldBytes
        lock.unlock()
        metrics.bytes(held)
        return bytes
    }

    /// Lets go of everything `owner` staged (its upload failed or expired).
    public func discardStaged(owner: String) {
        lock.lock()
        let image = state.takeStaged(owner: owner)
        if let image { state.freed.note(heapBytes: image.heapBytes) }
        let held = state.heldBytes
        lock.unlock()
        if image != nil { metrics.bytes(held) }
    }

    /// Makes `owner`'s staged frames the frames of the stored image: for each staged rendition,
    /// `image(rendition)` says what the image is (its id, frame count, preparer), and the frames
    /// within its frame count enter its entry as if decoded (prepared, counted in the budget,
    /// answering anyone waiting for them). Adoption is not a request: the image becomes active
    /// (decoded ahead) only when someone asks for it. Returns the frames adopted.
    @discardableResult
    public func adoptStaged(owner: String, as image: (FrameRendition) -> CacheableImage) -> Int {
        lock.lock()
        let staged = state.takeStaged(owner: owner)
        lock.unlock()
        guard let staged else { return 0 }
        // Prepared outside the lock, as a decode thread prepares the frames it makes.
        let groups = staged.renditions.values.map { rendition in
            let target = image(rendition.rendition)
            let frames = rendition.frames.filter { $0.key < target.frameCount }.sorted { $0.key < $1.key }.map {
                (index: $0.key, frame: CachedFrame(bytes: $0.value, attachment: target.prepare?($0.key, $0.value)))
            }
            return (target, frames)
        }
        let now = clock.seconds()
        var answered: [([ImageEntry.Completion], CachedFrame, Int)] = []
        var adopted = 0
        lock.lock()
        for (target, frames) in groups where !shuttingDown {
            guard let last = frames.last else { continue }
            let isNew = state.entries[target.key] == nil
            let entry = entry(for: target, startingAt: last.index, asked: false, now: now)
            // Not asked for since the last purge, so not active (CacheState.isActive).
            if isNew { entry.requestGeneration = state.purgeGeneration &- 1 }
            for (index, frame) in frames where entry.frames[index] == nil {
                guard state.makeRoom(for: frame.count, reach: .outsideWindows, protecting: entry, keep: index, now: now)
                else { break }
                state.store(frame, in: entry, at: index)
                adopted += 1
                let waiters = entry.takeWaiters(for: index)
                state.waitingRequests -= waiters.count
                if !waiters.isEmpty { answered.append((waiters, frame, index)) }
            }
        }
        state.counters.adopted += adopted
        // Nobody asked for the images adopted into new entries: idle (their frames evictable) now.
        state.classify(now: now)
        let held = state.heldBytes
        lock.unlock()
        metrics.bytes(held)
        for (waiters, frame, index) in answered {
            for completion in waiters { completion(.success(frame.encoded(index))) }
        }
        return adopted
    }
}
