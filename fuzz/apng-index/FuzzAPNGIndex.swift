// libFuzzer entry for APNGIndexer (linked with AnimatedImage by fuzz/run.sh). Inputs are given the
// PNG signature when they lack it (so mutations explore chunks, not the signature), and the run
// traps when:
//   - indexing throws anything but a malformed/limit error, or crashes;
//   - the index breaks a limit or points outside the file (checkIndex);
//   - an APNG has more frames than acTL announces, a frame without data, or data ranges out of
//     file order; a still PNG has other than one full-canvas frame;
//   - sniffing says still PNG where indexing finds an animation.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if !input.starts(with: PNGSignature.bytes) { input = PNGSignature.bytes + input }
    let bytes = ImageBytes(input)
    let limits = FuzzLimits.indexing
    let index: ImageIndex
    do {
        index = try APNGIndexer.index(bytes, limits: limits)
    } catch {
        checkIndexingError(error)
        return 0
    }
    checkIndex(index, bytes: bytes, limits: limits)
    // Sniffing looks for any acTL before IDAT; indexing needs a valid one (else a still PNG).
    let sniffed = ImageFormat.sniff(bytes)
    check(
        index.format == .png ? sniffed == .png || sniffed == .apng : sniffed == .apng,
        "indexed as \(index.format), sniffed as \(String(describing: sniffed))")
    switch index.format {
    case .png:
        check(
            index.frames.count == 1 && index.frames[0].rect == index.canvasRect, "a still PNG with \(index.frames.count) frames")
    case .apng:
        check(!index.frames.isEmpty, "an APNG index without frames")
        if let control = APNGIndexer.animationControl(bytes) {
            check(index.frames.count <= control.frames, "\(index.frames.count) frames, acTL says \(control.frames)")
            check(index.playCount == control.plays, "playCount \(index.playCount), acTL says \(control.plays)")
        } else {
            fatalError("fuzz invariant: an APNG index without a valid acTL")
        }
        var previousEnd = 0
        for (i, frame) in index.frames.enumerated() {
            guard case .png(let ranges) = frame.source else { continue }
            check(!ranges.isEmpty, "frame \(i) has no data")
            for range in ranges {
                check(range.lowerBound >= previousEnd, "frame \(i) data \(range) out of file order")
                previousEnd = range.upperBound
            }
        }
    default:
        fatalError("fuzz invariant: APNGIndexer made a \(index.format) index")
    }
    return 0
}
