/// Where an entry's window lies and what it asks of the decode threads: the frames in it, the
/// next to decode ahead, the order eviction takes the others in, and when a real-time player will
/// want each. Read under the cache's lock.
extension ImageEntry {
    /// True when frame `i` lies in the window that starts at the playhead (wrapping).
    func inWindow(_ i: Int) -> Bool {
        frameCount > 0 && (i - playhead + frameCount) % frameCount < window
    }

    /// Every frame, the one needed again last first: for a looping player the frame at the
    /// playhead was just shown and comes round again after a whole loop, the one after it
    /// soonest. Eviction takes frames in this order (the farthest next use first, Belady's rule
    /// for a cyclic pattern); oldest-played-first would take exactly the frames asked for next.
    func framesNeededLastFirst() -> LazyMapSequence<Range<Int>, Int> {
        let (n, p) = (max(1, frameCount), playhead)
        return (0..<n).lazy.map { (((p - $0) % n) + n) % n }
    }

    /// The frame just before the playhead: when the decoder's canvas has been evicted, a
    /// request for the frame after the playhead resumes from it (one PNG decode) instead of
    /// replaying from a key frame, so eviction keeps it longer than other frames behind.
    func isResumeAnchor(_ i: Int) -> Bool {
        isExact && frameCount > 1 && i == (playhead - 1 + frameCount) % frameCount
    }

    /// How many frames from the playhead on are cached, in order, counting at most `limit`
    /// (and at most the animation).
    func framesReady(upTo limit: Int) -> Int {
        var ready = 0
        while ready < min(limit, frameCount) && frames[(playhead + ready) % frameCount] != nil { ready += 1 }
        return ready
    }

    /// The first frame of the window that is neither cached nor waited for, if any.
    var nextPrefetch: Int? {
        guard frameCount > 0 else { return nil }
        for step in 0..<min(window, frameCount) {
            let i = (playhead + step) % frameCount
            if frames[i] == nil && waiting[i] == nil { return i }
        }
        return nil
    }

    /// The frame a new run of decode-ahead would start with: ``nextPrefetch``, but, for a
    /// window that does not hold the whole animation, only once the frames ready from the
    /// playhead on have run down to half the window. Refilling in runs rather than a frame at
    /// a time lets a run reuse one canvas, where single frames would each restore it.
    var nextRunStart: Int? {
        guard let next = nextPrefetch else { return nil }
        if window >= frameCount { return next }
        let ready = (next - playhead + frameCount) % frameCount
        return ready <= window / 2 ? next : nil
    }

    /// Milliseconds of playback from the playhead to the start of frame `i` (wrapping).
    func playbackMs(toFrame i: Int) -> Int {
        guard let stamps = timestampsMs, durationMs > 0 else {
            return 100 * ((i - playhead + frameCount) % max(1, frameCount))
        }
        let delta = stamps[i] - stamps[playhead]
        return delta >= 0 ? delta : delta + durationMs
    }

    /// When frame `i` will be asked for if the client keeps playing in real time (cache clock
    /// seconds): what earliest-deadline-first decode-ahead orders its work by.
    func deadline(ofFrame i: Int) -> Double {
        lastRequest + Double(playbackMs(toFrame: i)) / 1000
    }
}
