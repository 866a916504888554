// libFuzzer entry for WebPIndexer (linked with AnimatedImage by fuzz/run.sh): libwebpdemux parses
// the RIFF container, Flipbook turns its frames into descriptors. The run traps when:
//   - indexing throws anything but a malformed/limit error, or crashes;
//   - the index breaks a limit or points outside the file (checkIndex);
//   - a still WebP has more than one frame or a delay, or an animation's loop count is negative;
//   - AnimatedImage, which sniffs first, disagrees with the indexer on a RIFF/WEBP file.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = imageBytes(data, size)
    let limits = FuzzLimits.indexing
    let index: ImageIndex
    do {
        index = try WebPIndexer.index(bytes, limits: limits)
    } catch {
        checkIndexingError(error)
        return 0
    }
    check(index.format == .webp, "format \(index.format)")
    check(!index.frames.isEmpty, "a WebP index without frames")
    checkIndex(index, bytes: bytes, limits: limits)
    guard case .webp(let animated) = index.header else { fatalError("fuzz invariant: WebP index without a WebP header") }
    if !animated {
        check(index.frames.count == 1, "a still WebP with \(index.frames.count) frames")
        check(index.frames.allSatisfy { $0.rawDelayMs == 0 }, "a still WebP with delays")
        check(index.playCount == 1, "a still WebP that plays \(index.playCount) times")
    }
    if ImageFormat.sniff(bytes) == .webp {
        let image = try? AnimatedImage(bytes: bytes, limits: limits, verification: .structural)
        check(
            image?.frameCount == index.frames.count,
            "AnimatedImage has \(String(describing: image?.frameCount)) frames, the index \(index.frames.count)")
    }
    return 0
}
