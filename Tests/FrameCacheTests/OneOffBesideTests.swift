import AnimatedImage
import FlipbookTestSupport
import Testing

@testable import FrameCache

/// A one-off request on an image whose decoder a thread holds, while the image's players are
/// short of frames (the start of playback): a free thread makes it beside, on a decoder of its
/// own, and the players' run goes on. Checked on the hand-built state of ``OneOffPatienceTests``
/// (a player of a 120 px rendition at frame 10 with nothing ready, a one-off of a 60 px
/// rendition waiting for frame 30), with the image marked busy as a thread holding it would.
@Suite("One-off requests beside a busy decoder")
struct OneOffBesideTests {
    let base = OneOffPatienceTests()
    /// Past the one-off's patience, and the longer one while players are short of frames: held
    /// back no longer.
    var now: Double { base.asked + base.patienceWhileShort }

    func frame() -> CachedFrame { CachedFrame(png: [UInt8](repeating: 7, count: 100), attachment: nil) }

    @Test func whilePlayersAreShortOfFramesAFreeThreadMakesTheOneOffBeside() throws {
        var (state, player, oneOff) = try base.makeState()
        player.busy = true
        #expect(player.framesReady(upTo: state.policy.tuning.playerReadyFrames) == 0)
        let taken = state.nextJob(now: now)
        let job = try #require(taken)
        #expect(job.entry === oneOff && job.index == 30 && job.urgent && job.beside)
        #expect(job.also.isEmpty, "the thread that holds the image serves the other renditions")
        #expect(oneOff.source.besideJob === oneOff && player.busy)
        #expect(state.counters.decodesBeside == 1)
        // One at a time beside an image; and the request being made beside is nobody else's job.
        #expect(state.peekJob(now: now) == nil)
        let next = base.next(state, after: player, run: 1, at: now)
        #expect(next?.entry !== oneOff)
        #expect(!state.policy.renditionsWanting(player, 30, in: state).contains { $0 === oneOff })
    }

    @Test func onceThePlayersHaveFramesReadyTheOneOffWaitsForTheDecoder() throws {
        var (state, player, oneOff) = try base.makeState()
        player.busy = true
        for i in 10..<(10 + state.policy.tuning.playerReadyFrames) { state.store(frame(), in: player, at: i) }
        #expect(!state.policy.takesBeside(oneOff, in: state))
        #expect(state.nextJob(now: now) == nil)
        // The decoder handed back, the one-off is made on it.
        player.busy = false
        let taken = state.nextJob(now: now)
        let job = try #require(taken)
        #expect(job.entry === oneOff && !job.beside && player.busy)
    }

    @Test func aNewViewersFirstFrameWaitsForTheDecoder() throws {
        let (state, player, oneOff) = try base.makeState()
        player.busy = true
        _ = oneOff.takeAllWaiters()
        oneOff.addWaiter({ _ in }, for: 0, tick: 50, now: base.asked)
        #expect(!state.policy.takesBeside(oneOff, in: state))
        #expect(state.peekJob(now: now) == nil)
    }

    @Test func aPlayersRequestIsNeverMadeBeside() throws {
        let (state, player, oneOff) = try base.makeState()
        _ = oneOff.takeAllWaiters()
        player.addWaiter({ _ in }, for: 10, tick: 50, now: base.asked)
        player.busy = true
        #expect(player.waitsAsPlayer && !state.policy.takesBeside(player, in: state))
        #expect(state.peekJob(now: now) == nil)
    }
}
