// libFuzzer entry for GIFIndexer (linked with AnimatedImage by fuzz/run.sh). Any bytes are indexed
// as a GIF, and the run traps when:
//   - indexing throws anything but a malformed/limit error, or crashes;
//   - the index breaks a limit or points outside the file (checkIndex);
//   - frames are not in file order, a frame's record does not start with 0x2C, or the canvas
//     does not cover the first frame (Chromium grows it);
//   - AnimatedImage, which sniffs first, disagrees with the indexer on a real GIF.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = imageBytes(data, size)
    let limits = FuzzLimits.indexing
    let index: ImageIndex
    do {
        index = try GIFIndexer.index(bytes, limits: limits)
    } catch {
        checkIndexingError(error)
        return 0
    }
    check(index.format == .gif, "format \(index.format)")
    checkIndex(index, bytes: bytes, limits: limits)
    var previousEnd = 0
    for (i, frame) in index.frames.enumerated() {
        guard case .gif(let descriptor, let end, _) = frame.source else { continue }
        check(descriptor >= previousEnd, "frame \(i) overlaps the one before")
        previousEnd = end
    }
    if let first = index.frames.first {
        check(
            index.canvasWidth >= first.rect.maxX && index.canvasHeight >= first.rect.maxY,
            "canvas \(index.canvasWidth)×\(index.canvasHeight) does not cover the first frame \(first.rect)")
    }
    guard case .gif(let header) = index.header else { fatalError("fuzz invariant: GIF index without a GIF header") }
    check(header.headerEnd <= bytes.count, "header ends at \(header.headerEnd) of \(bytes.count)")
    if let palette = header.globalPalette {
        check(palette.upperBound <= header.headerEnd, "global palette \(palette) past the header")
    }
    if ImageFormat.sniff(bytes) == .gif {
        let image = try? AnimatedImage(bytes: bytes, limits: limits, verification: .structural)
        check(
            image?.frameCount == (index.frames.isEmpty ? nil : index.frames.count),
            "AnimatedImage has \(String(describing: image?.frameCount)) frames, the index \(index.frames.count)")
    }
    return 0
}
