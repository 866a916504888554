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

    @Test func playbackTimesAreNonNegativeDecimals() {
        for (text, whole) in [
            ("0", "0"), ("150", "150"), ("150.0", "150"), ("150.5", "150"), ("007.25", "7"),
            ("99999999999999999999999.9", "99999999999999999999999"),
        ] {
            #expect(PlaybackTime(decimal: text)?.description == whole, "\(text)")
        }
        for text in ["", "-1", "+1", "1e3", ".5", "5.", "1.2.3", " 1", "1 ", "0x1", "NaN", "inf", "1,5", "١"] {
            #expect(PlaybackTime(decimal: text) == nil, "\(text)")
        }
    }

    @Test func fractionalTimesFallInTheFrameWhoseIntervalHoldsThem() throws {
        let t = Timeline(rawDelaysMs: [100, 200, 300], playCount: 0)
        func frame(_ text: String) throws -> Int { t.frameIndex(at: try #require(PlaybackTime(decimal: text))) }
        #expect(try frame("99.999") == 0)
        #expect(try frame("100.0") == 1)
        #expect(try frame("150.5") == 1)
        #expect(try frame("299.9999999999999999999") == 1)
        #expect(try frame("300") == 2)
        #expect(try frame("599.5") == 2)
        #expect(try frame("600.5") == 0)
        // 10^30 ms: 10^30 mod 600 = 400, in frame 2.
        #expect(try frame("1" + String(repeating: "0", count: 30)) == 2)
        let twice = Timeline(rawDelaysMs: [100, 200, 300], playCount: 2)
        #expect(twice.frameIndex(at: try #require(PlaybackTime(decimal: "1199.9"))) == 2)
        #expect(twice.frameIndex(at: try #require(PlaybackTime(decimal: "1150.5"))) == 2)
        #expect(twice.frameIndex(at: try #require(PlaybackTime(decimal: "700.5"))) == 1)
        #expect(twice.frameIndex(at: try #require(PlaybackTime(decimal: "1" + String(repeating: "0", count: 40)))) == 2)
    }

    @Test func wholeMillisecondTimesAgreeWithDecimalOnes() {
        let t = Timeline(rawDelaysMs: [30, 0, 70, 45], playCount: 3)
        for ms in 0..<1_000 {
            #expect(t.frameIndex(atMs: ms) == t.frameIndex(at: PlaybackTime(decimal: "\(ms).5")!), "\(ms)")
        }
    }
}
