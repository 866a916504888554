// Shared by the image fuzz targets (compiled into each of them by fuzz/run.sh): the input as
// ImageBytes, the limits the targets decode under, and the invariants every index must keep.

@testable import AnimatedImage

/// Traps (a finding) when `condition` is false.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant: \(message())") }
}

/// The fuzzer's input as the bytes of a file (copied: ImageBytes owns its memory).
func imageBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> ImageBytes {
    guard let data, size > 0 else { return ImageBytes([]) }
    return ImageBytes(Array(UnsafeBufferPointer(start: data, count: size)))
}

enum FuzzLimits {
    /// Indexing decodes nothing: the service's own limits.
    static let indexing = DecodeLimits.default
    /// Decoding is bounded so that one input costs at most a few hundred milliseconds under
    /// ASan: frames up to 1 MP, 8 M pixels over all frames. A slower input is a finding
    /// (libFuzzer's -timeout): work must stay proportional to pixels and file bytes.
    static let decoding = DecodeLimits(
        maxFileBytes: 1 << 20, maxFramePixels: 1 << 20, maxFrames: 1000,
        maxTotalPixels: 1 << 23, maxDimension: 32_767)
}

/// Every error an input may cause while indexing says why in one of these cases.
func checkIndexingError(_ error: any Error) {
    guard let error = error as? AnimatedImageError else {
        fatalError("fuzz invariant: indexing threw \(type(of: error)): \(error)")
    }
    switch error {
    case .unsupportedFormat, .malformed, .noCompleteFrame, .limitExceeded:
        _ = error.description
    case .frameOutOfRange, .frameDecodeFailed:
        fatalError("fuzz invariant: indexing threw \(error)")
    }
}

/// What holds for the index of any file, whatever the format: a positive canvas within the
/// limits, frames within the limits with non-negative delays, data that lies inside the file.
func checkIndex(_ index: ImageIndex, bytes: ImageBytes, limits: DecodeLimits) {
    check(index.canvasWidth > 0 && index.canvasHeight > 0, "canvas \(index.canvasWidth)×\(index.canvasHeight)")
    check(max(index.canvasWidth, index.canvasHeight) <= limits.maxDimension, "canvas side past maxDimension")
    check(index.canvasWidth * index.canvasHeight <= limits.maxFramePixels, "canvas past maxFramePixels")
    check(index.frames.count <= limits.maxFrames, "\(index.frames.count) frames past maxFrames")
    check(
        index.frames.count * index.canvasWidth * index.canvasHeight <= limits.maxTotalPixels,
        "frames past maxTotalPixels")
    check(index.playCount >= 0, "playCount \(index.playCount)")
    for (i, frame) in index.frames.enumerated() {
        let rect = frame.rect
        check(rect.width >= 0 && rect.height >= 0 && rect.x >= 0 && rect.y >= 0, "frame \(i) rect \(rect)")
        check(rect.width * rect.height <= limits.maxFramePixels, "frame \(i) past maxFramePixels")
        check(frame.rawDelayMs >= 0, "frame \(i) delay \(frame.rawDelayMs)")
        switch (index.format, frame.source) {
        case (.gif, .gif(let descriptor, let end, let transparent)):
            check(descriptor >= 0 && descriptor < end && end <= bytes.count, "frame \(i) data \(descriptor)..<\(end)")
            check(bytes[descriptor] == 0x2C, "frame \(i) does not start at an image descriptor")
            check(transparent.map { (0..<256).contains($0) } ?? true, "frame \(i) transparent index")
        case (.png, .png(let ranges)), (.apng, .png(let ranges)):
            check(index.canvasRect.contains(rect), "frame \(i) \(rect) outside the canvas")
            for range in ranges {
                check(range.lowerBound >= 0 && range.upperBound <= bytes.count, "frame \(i) data \(range)")
            }
        case (.webp, .webp(let range, _)):
            check(index.canvasRect.contains(rect) && !rect.isEmpty, "frame \(i) \(rect) outside the canvas")
            check(range.lowerBound >= 0 && range.upperBound <= bytes.count, "frame \(i) data \(range)")
        default:
            fatalError("fuzz invariant: a \(index.format) index holds \(frame.source)")
        }
    }
}

/// A fingerprint of a canvas's pixels, for comparing renders without keeping them.
func fingerprint(_ canvas: Canvas) -> Int {
    var hasher = Hasher()
    hasher.combine(canvas.width)
    hasher.combine(canvas.height)
    canvas.pixels.withUnsafeBytes { hasher.combine(bytes: $0) }
    return hasher.finalize()
}
