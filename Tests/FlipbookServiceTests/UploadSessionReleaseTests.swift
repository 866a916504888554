import AnimatedImage
import FlipbookTestSupport
import FrameCache
import Testing

@testable import FlipbookService

/// An ended session keeps nothing of its body for the hour it lives on as an alias or a failure:
/// neither an index of its prefix that finished after the end nor a canvas drawn for a frame
/// request answered as it ended. (Before, both raced the end and stayed: 250 cut uploads with
/// waiters left ~7 mapped, deleted temporary files and ~12 MiB of canvases in the process.)
@Suite("Ended upload sessions let go of their prefix")
struct UploadSessionReleaseTests {
    static func image() throws -> AnimatedImage {
        try AnimatedImage(bytes: Corpus.bytes(UploadSessionTests.gif), verification: .structural)
    }

    @Test func anIndexThatFinishesAfterTheEndIsNotKept() throws {
        let session = UploadSession(
            id: "s", startDeadline: Int.max,
            renderer: UploadRenderer(
                owner: "s", encoder: RenditionEncoder(),
                cache: FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 1 << 20, decodeThreads: 1))))
        #expect(session.beginReceiving(path: "/nonexistent"))
        let image = try Self.image()
        #expect(session.offer(image, bytes: 100).progress.frameCount == image.frameCount)
        _ = session.end(.failed(status: .gone, detail: "cut"), now: 0)
        #expect(session.progress.image == nil)
        // An index that was running when the body was cut off reports after the end.
        let late = session.offer(image, bytes: 200)
        #expect(late.progress.image == nil && session.progress.image == nil)
    }

    @Test func aFrameRenderedAfterTheReleaseLeavesNoCanvas() throws {
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 1 << 22, decodeThreads: 1))
        let renderer = UploadRenderer(owner: "s", encoder: RenditionEncoder(), cache: cache)
        let image = try Self.image()
        let rendition = FrameRendition.exact(width: image.canvasWidth, height: image.canvasHeight)
        let before = try renderer.frame(1, of: image, rendition: rendition)
        #expect(renderer.holdsCanvas)
        renderer.release()
        #expect(!renderer.holdsCanvas)
        // A request answered as the session ended still gets its frame, the same bytes…
        let after = try renderer.frame(1, of: image, rendition: rendition)
        #expect(after.array == before.array)
        // …but neither the canvas nor the image (a mapping of the prefix) stays behind.
        #expect(!renderer.holdsCanvas)
        #expect(cache.stagedFrame(owner: "s", rendition: rendition, index: 1) == nil)
    }
}

/// Ended sessions are remembered for `uploads.aliasSeconds`, but never more than
/// ``UploadSessions/maxEndedSessions`` of them: a client cutting sessions off as fast as it can
/// does not grow memory with its rate.
@Suite("Ended upload sessions are bounded")
struct UploadSessionBoundTests {
    @Test func theOldestEndingsAreForgottenBeyondTheCap() throws {
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 1 << 20, decodeThreads: 1))
        let sessions = UploadSessions(
            settings: FlipbookSettings.Uploads(), encoder: RenditionEncoder(), cache: cache, maxEnded: 100)
        var ids: [String] = []
        for k in 0..<250 {
            let session = try #require(sessions.create())
            _ = session.end(.failed(status: .gone, detail: "cut"), now: Double(k))
            ids.append(session.id)
        }
        let remembered = ids.map { sessions.existing($0) != nil }
        let kept = remembered.count(where: { $0 })
        // Never more than the cap, and what is kept is the newest (the oldest tenth goes at once).
        #expect(kept <= 100 && kept >= 90, "\(kept) ended sessions remembered")
        #expect(remembered == Array(repeating: false, count: 250 - kept) + Array(repeating: true, count: kept))
        #expect(sessions.openCount == 0)
    }
}
