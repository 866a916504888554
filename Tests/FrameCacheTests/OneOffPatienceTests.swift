import AnimatedImage
import FlipbookTestSupport
import Testing

@testable import FrameCache

/// What a decode thread holding an image does next when a one-off request (a rendition asked for
/// a frame, not played) waits on it while a player's frame is due: the player's first, for as
/// long as the one-off has waited less than the patience — however many frames that is, and
/// the longer patience while the player is short of frames — then the one-off. Checked on a
/// hand-built state (no threads, no clock).
@Suite("One-off requests and players' frames")
struct OneOffPatienceTests {
    let asked = 1000.0
    let patience = 0.1
    let patienceWhileShort = 0.5

    /// A player P of `long` 120 px wide (played to frame 10, asked for at `asked`, frame 10 not
    /// made yet) and a one-off O 60 px wide waiting for frame 30 since `asked`.
    func makeState() throws -> (CacheState, player: ImageEntry, oneOff: ImageEntry) {
        let image = try TestImages.long()
        var state = CacheState(budget: 256 << 20, activeSeconds: 30)
        state.policy.tuning.oneOffPatienceSeconds = patience
        state.policy.tuning.oneOffPatienceWhileShortSeconds = patienceWhileShort
        func rendition(_ width: Int) throws -> FrameRendition {
            try RenditionRequest(width: width, format: .png)
                .rendition(canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        }
        let first = CacheableImage(id: "m", image: image, rendition: try rendition(120))
        let source = ImageSource(first)
        func add(_ cacheable: CacheableImage) -> ImageEntry {
            let entry = ImageEntry(image: cacheable, source: source, now: asked, tick: state.nextTick())
            source.entries.append(entry)
            state.entries[entry.id] = entry
            return entry
        }
        let player = add(first)
        for k in 8...10 { _ = player.movePlayhead(to: k) }
        let oneOff = add(CacheableImage(id: "m", image: image, rendition: try rendition(60)))
        oneOff.addWaiter({ _ in }, for: 30, tick: state.nextTick(), now: asked)
        state.refreshWindows(now: asked, cap: nil)
        #expect(player.window > 0 && !oneOff.isPlayed)
        return (state, player, oneOff)
    }

    func next(_ state: CacheState, after held: ImageEntry, run: Int, at now: Double) -> CachePolicy.Job? {
        state.policy.continuation(of: CachePolicy.Run(held: held, frames: run, sinceWaited: nil), in: state, now: now)
    }

    @Test func aPlayersDueFrameGoesFirstWhileTheOneOffHasWaitedLessThanThePatience() throws {
        let (state, player, _) = try makeState()
        for run in [1, 2, 5, 20] {
            let job = try #require(next(state, after: player, run: run, at: asked + patience / 2))
            #expect(job.entry === player && job.index == 10 && !job.urgent, "run \(run)")
        }
    }

    @Test func whileThePlayerIsShortOfFramesItsFrameGoesFirstForTheLongerPatience() throws {
        let (state, player, _) = try makeState()
        #expect(state.policy.isShortOfFrames(player, in: state))
        for at in [asked + patience, asked + patienceWhileShort - 0.01] {
            let job = try #require(next(state, after: player, run: 1, at: at))
            #expect(job.entry === player && job.index == 10 && !job.urgent, "at \(at - asked) s")
        }
    }

    @Test func thenTheOneOffIsMade() throws {
        let (state, player, oneOff) = try makeState()
        for run in [1, 2, 5] {
            let job = try #require(next(state, after: player, run: run, at: asked + patienceWhileShort))
            #expect(job.entry === oneOff && job.index == 30 && job.urgent, "run \(run)")
        }
    }

    @Test func withThePlayersFramesReadyTheOneOffIsMadeAfterThePatience() throws {
        var (state, player, oneOff) = try makeState()
        for i in 10..<(10 + state.policy.tuning.playerReadyFrames) {
            state.store(CachedFrame(png: [7], attachment: nil), in: player, at: i)
        }
        #expect(!state.policy.isShortOfFrames(player, in: state))
        let job = try #require(next(state, after: player, run: 1, at: asked + patience))
        #expect(job.entry === oneOff && job.index == 30 && job.urgent)
    }

    @Test func withNoPlayersAboutTheOneOffIsMadeAtOnce() throws {
        let (state, player, oneOff) = try makeState()
        // The player last asked 1 s ago and has nothing left to decode ahead.
        player.lastRequest = asked - 1
        player.window = 0
        let job = try #require(next(state, after: player, run: 1, at: asked + 0.01))
        #expect(job.entry === oneOff && job.urgent)
    }

    @Test func whilePlayersAreAboutTheOneOffWaitsOutItsPatienceWithTheImageHandedBack() throws {
        let (state, player, oneOff) = try makeState()
        // The player's next frame due only 10 s from now: nothing within the margin, but the
        // player is about (it asked just now), so its next request should find the decoder free.
        player.lastRequest = asked + 10
        #expect(next(state, after: player, run: 1, at: asked + 0.01) == nil)
        #expect(state.peekJob(now: asked + 0.01)?.entry !== oneOff)
        // The player has no frame ready: the longer patience.
        #expect(next(state, after: player, run: 1, at: asked + patience) == nil)
        let job = try #require(next(state, after: player, run: 1, at: asked + patienceWhileShort))
        #expect(job.entry === oneOff && job.urgent)
    }
}

/// The same rule when a decode thread is free and picks its next job (``CachePolicy/nextJob(in:now:largeAllowed:)``): a
/// one-off on an image whose players are about is held back, one on another image is not (a new
/// player's first frame looks like a one-off); and for a seek on a played rendition: a request
/// far from every player of it waits as a one-off.
@Suite("One-off requests when a thread picks its next job")
struct OneOffPatienceAtPickTests {
    let patience = 0.1

    @Test func aNewViewersPosterIsNotHeldBack() throws {
        let base = OneOffPatienceTests()
        let (state, _, oneOff) = try base.makeState()
        #expect(state.policy.holdsBack(oneOff, in: state, now: base.asked + 0.01))
        _ = oneOff.takeAllWaiters()
        oneOff.addWaiter({ _ in }, for: 0, tick: 20, now: base.asked)
        #expect(!state.policy.holdsBack(oneOff, in: state, now: base.asked + 0.01))
        let job = try #require(state.peekJob(now: base.asked + 0.01))
        #expect(job.entry === oneOff && job.index == 0 && job.urgent)
    }

    @Test func aFirstRequestForAnotherImageIsNotHeldBack() throws {
        let base = OneOffPatienceTests()
        var (state, _, oneOff) = try base.makeState()
        let other = ImageEntry(image: CacheableImage(id: "n", image: try TestImages.long()), now: base.asked, tick: 9)
        state.entries[other.id] = other
        other.addWaiter({ _ in }, for: 0, tick: 10, now: base.asked)
        state.refreshWindows(now: base.asked, cap: nil)
        let job = try #require(state.peekJob(now: base.asked + 0.01))
        #expect(job.entry === other && job.index == 0 && job.urgent)
        #expect(state.policy.holdsBack(oneOff, in: state, now: base.asked + 0.01))
        #expect(!state.policy.holdsBack(other, in: state, now: base.asked + 0.01))
    }

    @Test func aPlayersDueFrameIsPickedWhileTheOneOffHasWaitedLessThanThePatience() throws {
        let base = OneOffPatienceTests()
        let (state, player, oneOff) = try base.makeState()
        let early = try #require(state.peekJob(now: base.asked + 0.05))
        #expect(early.entry === player && early.index == 10 && !early.urgent)
        let short = try #require(state.peekJob(now: base.asked + patience))
        #expect(short.entry === player && short.index == 10 && !short.urgent, "the player is short of frames")
        let late = try #require(state.peekJob(now: base.asked + base.patienceWhileShort))
        #expect(late.entry === oneOff && late.index == 30 && late.urgent)
        // Without patience, waiting requests come first as before.
        var withoutPatience = state
        withoutPatience.policy.tuning.oneOffPatienceSeconds = 0
        let impatient = try #require(withoutPatience.peekJob(now: base.asked + 0.05))
        #expect(impatient.entry === oneOff && impatient.urgent)
    }

    @Test func aSeekOnAPlayedRenditionWaitsAsAOneOffAndThePlayersFrameGoesFirst() throws {
        let base = OneOffPatienceTests()
        let (state, player, oneOff) = try base.makeState()
        // The one-off is served; then a client seeks far into the played rendition (frame 60,
        // the player being at 10), and the player asks for its next frame after that.
        _ = oneOff.takeAllWaiters()
        #expect(player.notePlaying(60) == .seek && player.playhead == 10)
        player.addWaiter({ _ in }, for: 60, tick: 1, now: base.asked, sought: true)
        #expect(!player.waitsAsPlayer && player.nextWaitingFrame == 60)
        #expect(player.notePlaying(11) == .playOn && player.playhead == 11)
        player.addWaiter({ _ in }, for: 11, tick: 2, now: base.asked, sought: false)
        #expect(player.waitsAsPlayer && player.nextWaitingFrame == 11)
        let job = try #require(state.peekJob(now: base.asked + 0.01))
        #expect(job.entry === player && job.index == 11 && job.urgent)
        // Once the player's frame is answered, the seek is a one-off again.
        _ = player.takeWaiters(for: 11)
        #expect(!player.waitsAsPlayer && player.nextWaitingFrame == 60)
    }
}
