/// Which frames can be rendered without the ones before them, worked out from the index alone
/// (rectangles, disposal, blending, opacity), the way browsers find a frame's "required
/// previous frame".
public struct FrameDependencies: Sendable {
    /// The canvas is entirely transparent just before frame i is drawn.
    public let startsClean: [Bool]
    /// Frame i's composited pixels do not depend on any earlier frame.
    public let independent: [Bool]
    /// Rendering may start at frame i from a transparent canvas and reach every later frame
    /// exactly: frame i starts clean, or it is independent and does not restore what was
    /// beneath it.
    public let replayStart: [Bool]

    public init(frames: [FrameDescriptor], canvas: PixelRect) {
        var clean = [Bool](repeating: false, count: frames.count)
        var independent = [Bool](repeating: false, count: frames.count)
        var start = [Bool](repeating: false, count: frames.count)
        for (i, frame) in frames.enumerated() {
            if i == 0 {
                clean[i] = true
            } else {
                let previous = frames[i - 1]
                switch previous.disposal {
                case .previous:
                    // The canvas goes back to what frame i − 1 found.
                    clean[i] = clean[i - 1]
                case .background:
                    // Clearing a rectangle leaves a clean canvas if it covered everything, or if
                    // the canvas was clean before that frame drew into that very rectangle.
                    clean[i] = previous.rect.contains(canvas) || clean[i - 1]
                case .none:
                    clean[i] = false
                }
            }
            let coversCanvas = frame.rect.contains(canvas)
            independent[i] = clean[i] || (coversCanvas && (frame.blend == .source || frame.isOpaque))
            start[i] = clean[i] || (independent[i] && frame.disposal != .previous)
        }
        self.startsClean = clean
        self.independent = independent
        self.replayStart = start
    }

    /// The nearest frame at or before `index` from which rendering can start on a blank canvas.
    public func replayStart(atOrBefore index: Int) -> Int {
        var i = index
        while i > 0 && !replayStart[i] { i -= 1 }
        return i
    }
}
