import AnimatedImage
import Testing

@Suite("Timeline")
struct TimelineTests {
    @Test func delaysOfTenMillisecondsOrLessPlayAsOneHundred() {
        let t = Timeline(rawDelaysMs: [0, 10, 11, 20, 1000], playCount: 0)
        #expect(t.rawDelaysMs == [0, 10, 11, 20, 1000])
        #expect(t.delaysMs == [100, 100, 11, 20, 1000])
    }

    @Test func timestampsAndDuration() {
        let t = Timeline(rawDelaysMs: [100, 200, 300], playCount: 0)
        #expect(t.timestampsMs == [0, 100, 300])
        #expect(t.durationMs == 600)
    }

    @Test func repetitionCount() {
        #expect(Timeline(rawDelaysMs: [100], playCount: 0).repetitionCount == .infinite)
        #expect(Timeline(rawDelaysMs: [100], playCount: 1).repetitionCount == .count(0))
        #expect(Timeline(rawDelaysMs: [100], playCount: 3).repetitionCount == .count(2))
        #expect(RepetitionCount.infinite.description == "infinite")
    }

    @Test func delayGcd() {
        #expect(Timeline(rawDelaysMs: [40, 60, 100], playCount: 0).delayGcdMs == 20)
        #expect(Timeline(rawDelaysMs: [0, 70], playCount: 0).delayGcdMs == 10)
        #expect(Timeline(rawDelaysMs: [33], playCount: 0).delayGcdMs == 33)
    }

    @Test func frameAtTimeLoopsForever() {
        let t = Timeline(rawDelaysMs: [100, 200, 300], playCount: 0)
        #expect(t.frameIndex(atMs: 0) == 0)
        #expect(t.frameIndex(atMs: 99) == 0)
        #expect(t.frameIndex(atMs: 100) == 1)
        #expect(t.frameIndex(atMs: 299) == 1)
        #expect(t.frameIndex(atMs: 300) == 2)
        #expect(t.frameIndex(atMs: 599) == 2)
        #expect(t.frameIndex(atMs: 600) == 0)
        #expect(t.frameIndex(atMs: 600 * 1000 + 150) == 1)
    }

    @Test func afterTheLastPlayTheLastFrameStays() {
        let t = Timeline(rawDelaysMs: [100, 200, 300], playCount: 2)
        #expect(t.frameIndex(atMs: 600 + 100) == 1)
        #expect(t.frameIndex(atMs: 1199) == 2)
        #expect(t.frameIndex(atMs: 1200) == 2)
        #expect(t.frameIndex(atMs: 1_000_000) == 2)
    }

    @Test func clampedDelaysDecideTheTime() {
        let t = Timeline(rawDelaysMs: [0, 0], playCount: 0)
        #expect(t.frameIndex(atMs: 99) == 0)
        #expect(t.frameIndex(atMs: 100) == 1)
    }

    @Test func edgeCases() {
        #expect(Timeline(rawDelaysMs: [500], playCount: 0).frameIndex(atMs: 12345) == 0)
        #expect(Timeline(rawDelaysMs: [100, 100], playCount: 0).frameIndex(atMs: -5) == 0)
        #expect(Timeline(rawDelaysMs: [100, 100], playCount: 0).frameIndex(atMs: Int.max) == (Int.max % 200 < 100 ? 0 : 1))
        #expect(Timeline(rawDelaysMs: [100, 100], playCount: Int.max).frameIndex(atMs: Int.max) >= 0)
    }
}
