// libFuzzer entry for the Timeline and the metadata model (linked with AnimatedImage by
// fuzz/run.sh). An input that is an image file is indexed (structurally, under FuzzLimits.decoding)
// and its ImageMetadata built as the store builds it; any other input is a raw delay table:
// byte 0 = play count, byte 1 = delay width (1–4 bytes, little-endian), the rest the delays.
// (The metadata's JSON, field names and round trip, is FlipbookService's: MetadataDocument, checked
// by MetadataDocumentTests over every corpus file and seeded random documents.) The run traps when:
//   - effective delays are not the raw ones with ≤ 10 ms played as 100 ms, timestamps are not
//     their running sum, the duration is not their sum, or the GCD does not divide every delay;
//   - frameIndex(atMs:) gives a frame outside the table, a frame whose interval does not hold t
//     (within a play), goes backwards within a play, or is not the last frame after the last play;
//   - repetitionCount disagrees with playCount;
//   - the metadata disagrees with the image's index and timeline: canvas, format, counts,
//     timing, truncation, or a frame's rectangle, disposal, blend, delays or timestamp.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 2 else { return 0 }
    let bytes = imageBytes(data, size)
    if ImageFormat.sniff(bytes) != nil {
        guard let image = try? AnimatedImage(bytes: bytes, limits: FuzzLimits.decoding, verification: .structural) else {
            return 0
        }
        checkTimeline(image.timeline, probes: Array(UnsafeBufferPointer(start: data, count: min(size, 64))))
        checkMetadata(image)
    } else {
        let width = 1 + Int(data[1]) % 4
        var delays: [Int] = []
        var offset = 2
        while offset + width <= size {
            var value = 0
            for k in 0..<width { value |= Int(data[offset + k]) << (8 * k) }
            delays.append(value)
            offset += width
        }
        guard !delays.isEmpty else { return 0 }
        let timeline = Timeline(rawDelaysMs: delays, playCount: Int(data[0]) % 8)
        checkTimeline(timeline, probes: Array(UnsafeBufferPointer(start: data, count: min(size, 64))))
    }
    return 0
}

func checkTimeline(_ timeline: Timeline, probes: [UInt8]) {
    let count = timeline.rawDelaysMs.count
    check(timeline.delaysMs.count == count && timeline.timestampsMs.count == count, "table lengths differ")
    var start = 0
    for i in 0..<count {
        let raw = timeline.rawDelaysMs[i]
        check(
            timeline.delaysMs[i] == (raw <= Timeline.clampThresholdMs ? Timeline.clampedDelayMs : raw),
            "frame \(i): raw \(raw) plays as \(timeline.delaysMs[i])")
        check(timeline.timestampsMs[i] == start, "frame \(i) starts at \(timeline.timestampsMs[i]), not \(start)")
        check(
            timeline.delayGcdMs > 0 && timeline.delaysMs[i] % timeline.delayGcdMs == 0,
            "GCD \(timeline.delayGcdMs) does not divide \(timeline.delaysMs[i])")
        start += timeline.delaysMs[i]
    }
    check(timeline.durationMs == start, "duration \(timeline.durationMs), delays sum to \(start)")
    switch timeline.repetitionCount {
    case .infinite: check(timeline.playCount == 0, "infinite repetitions for \(timeline.playCount) plays")
    case .count(let n): check(n == timeline.playCount - 1 && n >= 0, "\(n) repetitions for \(timeline.playCount) plays")
    }

    // Times: every frame's start and end, the input's bytes scaled, and the extremes.
    var times = [Int.min, -1, 0, 1, Int.max, timeline.durationMs, timeline.durationMs &* 3 &+ 1]
    for i in 0..<min(count, 64) {
        times += [timeline.timestampsMs[i], timeline.timestampsMs[i] + timeline.delaysMs[i] - 1]
    }
    for (k, byte) in probes.enumerated() { times.append(Int(byte) * (k + 1) * 37) }
    for t in times {
        let frame = timeline.frameIndex(atMs: t)
        check(frame >= 0 && frame < count, "t = \(t) gives frame \(frame) of \(count)")
        guard count > 1, timeline.durationMs > 0 else { check(frame == 0, "one frame, t = \(t) gives \(frame)"); continue }
        if t <= 0 { check(frame == 0, "t = \(t) gives frame \(frame)"); continue }
        let plays = timeline.playCount
        let (end, overflow) = timeline.durationMs.multipliedReportingOverflow(by: plays)
        if plays > 0, !overflow, t >= end {
            check(frame == count - 1, "after the last play (t = \(t)) frame \(frame), not the last")
            continue
        }
        let offset = t % timeline.durationMs
        check(
            timeline.timestampsMs[frame] <= offset && offset < timeline.timestampsMs[frame] + timeline.delaysMs[frame],
            "t = \(t) (offset \(offset)) gives frame \(frame) [\(timeline.timestampsMs[frame]), +\(timeline.delaysMs[frame]))")
        if offset > 0 {
            check(timeline.frameIndex(atMs: t - 1) <= frame, "frameIndex goes backwards at t = \(t)")
        }
    }
}

func checkMetadata(_ image: AnimatedImage) {
    let metadata = ImageMetadata(image: image)
    check(metadata.format == image.format.rawValue && metadata.mimeType == image.format.mimeType, "format")
    check(metadata.width == image.canvasWidth && metadata.height == image.canvasHeight, "canvas")
    check(metadata.frameCount == image.frameCount && metadata.frames.count == image.frameCount, "frame counts")
    check(metadata.animated == (image.frameCount > 1), "animated")
    check(
        metadata.durationMs == image.timeline.durationMs && metadata.playCount == image.timeline.playCount
            && metadata.repetitionCount == image.timeline.repetitionCount
            && metadata.delayGcdMs == image.timeline.delayGcdMs, "timing")
    check(metadata.truncated == image.index.truncated, "truncated")
    check(metadata.fileBytes == image.bytes.count, "fileBytes")
    for (i, frame) in metadata.frames.enumerated() {
        let indexed = image.index.frames[i]
        check(
            frame.index == i && frame.rect == indexed.rect && frame.rawDelayMs == indexed.rawDelayMs
                && frame.dispose == indexed.disposal && frame.blend == indexed.blend
                && frame.delayMs == image.timeline.delaysMs[i] && frame.timestampMs == image.timeline.timestampsMs[i],
            "frame \(i) of the metadata disagrees with the index")
    }
    // A frame that needs nothing beneath it is independent; the first frame always is.
    check(metadata.frames.first?.independent == true, "frame 0 is not independent")
}
