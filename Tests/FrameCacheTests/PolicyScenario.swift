import AnimatedImage
import FlipbookTestSupport

@testable import FrameCache

/// A cache state built by hand on a fake clock, for the decisions of ``CachePolicy``: images
/// asked for, played, waited for and cached as ``FrameCache`` would note them (the same
/// ``CacheState`` calls, windows worked out when due as a request does), with no decode thread —
/// a scenario says what the policy decides next.
struct PolicyScenario {
    let clock = ManualClock()
    var state: CacheState
    /// Every image is `image` (by default `long()`: 128 frames of 64×64, 16 KiB a canvas); a
    /// frame cached costs ``frameBytes`` unless said otherwise.
    let image: AnimatedImage
    static let frameBytes = 1_000

    init(
        budget: Int = 64 << 20, image: AnimatedImage? = nil, _ configure: (inout CachePolicy) -> Void = { _ in }
    ) throws {
        var policy = CachePolicy(activeSeconds: 30)
        configure(&policy)
        state = CacheState(budget: budget, policy: policy)
        self.image = try image ?? TestImages.long()
    }

    var now: Double { clock.seconds() }

    /// Rules 2 and 4's scene: a player of image `m` 60 px wide that played frames 0–2 (and has
    /// `ready` cached too), and a one-off 30 px wide waiting for frame 40; windows worked out.
    static func playerAndOneOff(ready: [Int] = []) throws -> (PolicyScenario, player: ImageEntry, oneOff: ImageEntry) {
        var s = try PolicyScenario()
        let player = try s.entry("m", width: 60)
        s.play(player, 0...2)
        s.cache(player, ready)
        let oneOff = try s.entry("m", width: 30, startingAt: 40)
        s.wait(oneOff, 40)
        s.refresh()
        return (s, player, oneOff)
    }

    func advance(_ seconds: Double) { clock.advance(by: seconds) }

    /// The entry of image `id` (full size, or `width` px wide), made as the cache makes one on a
    /// first request — for frame `start` — without noting the request itself.
    mutating func entry(_ id: String, width: Int? = nil, startingAt start: Int = 0) throws -> ImageEntry {
        var cacheable = CacheableImage(id: id, image: image)
        if let width {
            cacheable.rendition = try RenditionRequest(width: width, format: .png)
                .rendition(canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        }
        if let existing = state.entries[cacheable.key] { return existing }
        let source = state.sources[id] ?? ImageSource(cacheable)
        state.sources[id] = source
        let entry = ImageEntry(image: cacheable, source: source, now: now, tick: state.nextTick(), startingAt: start)
        source.entries.append(entry)
        state.entries[entry.id] = entry
        return entry
    }

    /// Frame `index` of `entry` asked for now and answered from the cache (cached first if it
    /// was not, as if decoded ahead).
    mutating func hit(_ entry: ImageEntry, _ index: Int) {
        if entry.frames[index] == nil { cache(entry, [index]) }
        _ = state.noteRequest(for: index, of: entry, now: now)
        state.refreshWindowsIfDue(now: now, cap: state.windowCap)
    }

    /// Frames `frames` of `entry` asked for now, one after another, each answered from the cache:
    /// from the third in order the rendition is played (``ImageEntry/isPlayed``).
    mutating func play(_ entry: ImageEntry, _ frames: ClosedRange<Int>) {
        for index in frames { hit(entry, index) }
    }

    /// Frame `index` of `entry` asked for now and not cached: the request waits.
    mutating func wait(_ entry: ImageEntry, _ index: Int) {
        let move = state.noteRequest(for: index, of: entry, now: now)
        state.refreshWindowsIfDue(now: now, cap: state.windowCap)
        state.wait({ _ in }, for: index, of: entry, now: now, sought: move == .seek)
    }

    /// Keeps `frames` of `entry` as if made, `bytes` each.
    mutating func cache(_ entry: ImageEntry, _ frames: [Int], bytes: Int = frameBytes) {
        for index in frames where entry.frames[index] == nil {
            state.store(CachedFrame(png: [UInt8](repeating: 7, count: bytes), attachment: nil), in: entry, at: index)
        }
    }

    /// Gives `entry`'s image a decoder (a canvas) as a decode thread leaves one after a job.
    mutating func giveDecoder(_ entry: ImageEntry) {
        entry.renderer = FrameRenderer(image: image)
        state.updateRendererBytes(entry)
    }

    /// The windows worked out now (`cap`: a pressure cap), images whose active time passed
    /// made idle first.
    mutating func refresh(cap: Int? = nil) {
        state.expire(now: now, atMost: .max)
        state.refreshWindows(now: now, cap: cap)
    }

    /// What a free decode thread takes now.
    func nextJob(largeAllowed: Bool = true) -> CachePolicy.Job? {
        state.policy.nextJob(in: state, now: now, largeAllowed: largeAllowed)
    }

    /// What the thread holding `held` does after the `frames`-th frame of its run.
    func continuation(of held: ImageEntry, frames: Int = 1, sinceWaited: Int? = nil) -> CachePolicy.Job? {
        state.policy.continuation(of: .init(held: held, frames: frames, sinceWaited: sinceWaited), in: state, now: now)
    }

    /// What eviction takes first to make room for `bytes` more, within `reach`, as (entry id,
    /// frame) pairs; decoders as frame -1.
    func evicted(toFit bytes: Int, reach: CachePolicy.EvictionReach = .outsideWindows) -> [String] {
        let extra = state.holdLimit - state.heldBytes + bytes
        return state.policy.eviction(toFit: extra, in: state, reach: reach, protecting: nil, now: now).candidates
            .map { candidate in
                switch candidate {
                case .frame(let entry, let index): "\(entry.id)#\(index)"
                case .checkpoints(let entry): "\(entry.id) checkpoints"
                case .decoder(let entry): "\(entry.id) decoder"
                case .staged(let owner, _, let index): "staged \(owner)#\(index)"
                }
            }
    }
}

extension CachePolicy.Job {
    /// `entry-id#index`, `!` when someone waits, `beside` when made beside the decoder.
    var summary: String { "\(entry.id)#\(index)\(urgent ? "!" : "")\(beside ? " beside" : "")" }
}
