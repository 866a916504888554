/// What happens to a frame's area after it has been shown, before the next frame is drawn.
public enum FrameDisposal: String, Sendable {
    /// Leave the frame's pixels in place.
    case none
    /// Clear the frame's rectangle to transparent black (GIF "restore to background",
    /// APNG BACKGROUND, WebP dispose-to-background: browsers never paint a background colour).
    case background
    /// Restore the canvas to what it was before the frame was drawn.
    case previous
}

/// How a frame's pixels are combined with the canvas beneath.
public enum FrameBlend: String, Sendable {
    /// Replace the pixels of the frame's rectangle, alpha included.
    case source
    /// Alpha-composite the frame over the canvas ("source over", non-premultiplied).
    case over
}
