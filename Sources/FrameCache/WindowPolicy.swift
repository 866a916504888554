/// How many frames of an image the cache keeps and decodes ahead: FLAnimatedImage's rule
/// carried to a shared server.
///
/// - An animation whose decoded frames total ``wholeAnimationBytes`` or less (10 MB, the
///   FLAnimatedImage "small" category) is cached whole.
/// - Otherwise each active image gets an equal share of the byte budget, and its window is as
///   many encoded frames as fit in the share — never fewer than ``minimumWindow``.
/// - Under memory pressure the window is capped (see ``PressureController``).
///
/// A window counts the frame at the playhead: a window of 1 keeps just the frame last asked
/// for, a window of n also decodes the n − 1 frames after it (wrapping to frame 0).
public struct WindowPolicy: Sendable, Equatable {
    public var wholeAnimationBytes: Int
    public var minimumWindow: Int

    public init(wholeAnimationBytes: Int = 10_000_000, minimumWindow: Int = 2) {
        self.wholeAnimationBytes = wholeAnimationBytes
        self.minimumWindow = max(1, minimumWindow)
    }

    /// The window of one image.
    /// - Parameters:
    ///   - decodedFrameBytes: RGBA bytes of one canvas.
    ///   - encodedFrameBytes: the average PNG size seen so far for the image (an estimate).
    ///   - activeImages: images requested recently, this one included.
    ///   - cap: the memory-pressure cap, if any.
    public func window(frameCount: Int, decodedFrameBytes: Int, encodedFrameBytes: Int,
                       budget: Int, activeImages: Int, cap: Int?) -> Int {
        guard frameCount > 0 else { return 0 }
        var window: Int
        if frameCount.multipliedReportingOverflow(by: decodedFrameBytes).partialValue <= wholeAnimationBytes,
           decodedFrameBytes <= wholeAnimationBytes {
            window = frameCount
        } else {
            let share = budget / max(1, activeImages)
            window = share / max(1, encodedFrameBytes)
            window = min(frameCount, max(minimumWindow, window))
        }
        if let cap { window = min(window, cap) }
        return max(1, min(window, frameCount))
    }
}
