import FoundationEssentials

/// What the cache reports of itself: `/stats` and `/metrics` counts, one image's residency
/// (`GET /images/{id}/cache`), and for tests what keeps it busy. Read under the lock; reading
/// moves no playhead.
extension FrameCache {
    /// The cache's state, listing the `listing` most recently used entries in ``CacheStats/images``
    /// (all by default; `/stats` lists ``CacheStats/listedImages``: every entry of a large cache
    /// made a response of megabytes and its encoding tens of megabytes of heap). The totals count
    /// every entry.
    public func stats(listing: Int = .max) -> CacheStats {
        let now = clock.seconds()
        lock.lock()
        defer { lock.unlock() }
        var (frameBytes, decoderBytes, cachedFrames) = (0, 0, 0)
        for entry in state.entries.values {
            frameBytes += entry.frameBytes
            decoderBytes += entry.source.entries.first === entry ? entry.rendererBytes : 0
            cachedFrames += entry.cachedCount
        }
        let images = state.entries.values.sorted { $1.usedBefore($0) }.prefix(max(0, listing)).map { entry in
            CacheStats.Image(
                id: entry.source.id, rendition: entry.isExact ? "full" : entry.rendition.key,
                frameCount: entry.frameCount, cachedFrames: entry.cachedCount,
                window: entry.window, whole: entry.isWhole, playhead: entry.playhead,
                frameBytes: entry.frameBytes,
                decoderBytes: entry.source.entries.first === entry ? entry.rendererBytes : 0,
                loaded: entry.image != nil, waiting: entry.waiterCount,
                idleSeconds: max(0, now - entry.lastRequest))
        }
        let c = state.counters
        return CacheStats(
            budgetBytes: state.budget, workingReserveBytes: state.budget - state.holdLimit, usedBytes: state.heldBytes,
            frameBytes: frameBytes, decoderBytes: decoderBytes, entryBytes: state.entries.overheadBytes,
            entries: state.entries.count, cachedFrames: cachedFrames,
            hits: c.hits + hitTables.hits, misses: c.misses, waits: c.misses - c.refusedQueueFull, coalesced: c.coalesced,
            decodes: c.decodes, prefetches: c.prefetches, framesDecoded: c.framesDecoded, resumes: c.resumes,
            notKept: c.uncacheable,
            evictions: c.evictions, refusedQueueFull: c.refusedQueueFull,
            stagedFrames: state.staged.values.reduce(0) { $0 + $1.frameCount }, stagedBytes: state.stagedBytes,
            adopted: c.adopted, queueDepth: state.waitingRequests,
            decodeThreads: configuration.decodeThreads, decodeMemory: configuration.decodeBudget?.stats(),
            pressure: CacheStats.Pressure(
                level: pressure.level(at: now), windowCap: pressure.windowCap(at: now),
                onDemand: pressure.isOnDemand(at: now)),
            purges: purges, renditions: renditionCountsLocked(), images: images)
    }

    /// How the entries split into renditions decoded ahead and made on demand (`/metrics`).
    public func renditionCounts() -> CacheStats.Renditions {
        lock.lock()
        defer { lock.unlock() }
        return renditionCountsLocked()
    }

    private func renditionCountsLocked() -> CacheStats.Renditions {
        var decodeAhead = 0
        var onDemand = 0
        // Only active renditions have windows or are made on demand.
        for entry in state.index.active.entries {
            if !entry.isExact && entry.window > 0 { decodeAhead += 1 }
            if entry.onDemand && !entry.isExact { onDemand += 1 }
        }
        return CacheStats.Renditions(
            entries: state.entries.count, decodeAhead: decodeAhead, onDemand: onDemand,
            sharedRenders: state.counters.sharedRenders, madeBeside: state.counters.decodesBeside,
            replaced: state.counters.renditionsReplaced)
    }

    /// Which of one image's frames the cache holds right now, its window and its playhead
    /// (`GET /images/{id}/cache`); nil when the image has no entry. Reading it moves nothing.
    public func residency(of id: String) -> ImageResidency? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = state.entries[id] else { return nil }
        return ImageResidency(
            frameCount: entry.frameCount,
            cachedFrames: entry.frames.indices.filter { entry.frames[$0] != nil },
            window: entry.window, whole: entry.isWhole, playhead: entry.playhead)
    }

    /// The indices of an image's cached frames, in order.
    func cachedFrameIndices(of id: String) -> [Int] {
        residency(of: id)?.cachedFrames ?? []
    }

    /// What keeps the cache busy, for tests: empty when idle.
    func debugDescriptionOfWork() -> String {
        lock.lock()
        defer { lock.unlock() }
        var parts: [String] = []
        if activeJobs > 0 { parts.append("activeJobs \(activeJobs)") }
        if state.waitingRequests > 0 { parts.append("waitingRequests \(state.waitingRequests)") }
        if let job = state.peekJob(now: clock.seconds()) {
            parts.append("job \(job.entry.id)#\(job.index) urgent \(job.urgent)")
        }
        return parts.joined(separator: ", ")
    }
}
