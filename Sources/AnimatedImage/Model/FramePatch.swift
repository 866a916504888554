/// The decoded pixels of one frame, before compositing: what a format's decoder hands the
/// ``Compositor``.
public struct FramePatch: Sendable {
    /// Where the pixels go on the canvas, as the file states it (the compositor clips).
    public var rect: PixelRect
    public var pixels: Pixels
    /// The arithmetic of blend `over`, which differs between formats in Chromium.
    public var blending: Blending = .exact

    /// How a translucent pixel is composited over the canvas.
    public enum Blending: Sendable {
        /// Non-premultiplied source-over, computed exactly and rounded to nearest (APNG: what
        /// Chromium shows).
        case exact
        /// Chromium's WebP arithmetic (Blink's non-premultiplied blend, as libwebp's anim decoder
        /// has it): integer alpha scaling, colour truncated; pixels are blended only against the
        /// previous frame's canvas, never where the canvas was cleared (``Compositor``).
        case webp
    }

    /// A frame's pixels in the layout its format decodes to.
    public enum Pixels: Sendable {
        /// One palette index per pixel (GIF). `palette` has 256 entries of RGBA packed as
        /// `r | g << 8 | b << 16 | a << 24`; `transparentIndex` pixels leave the canvas untouched.
        case indexed(indices: [UInt8], palette: [UInt32], transparentIndex: Int?)
        /// Non-premultiplied RGBA, 4 bytes per pixel, rows of `rect.width` pixels (APNG, WebP).
        case rgba([UInt8])
    }

    public init(rect: PixelRect, pixels: Pixels, blending: Blending = .exact) {
        self.rect = rect
        self.pixels = pixels
        self.blending = blending
    }
}

/// Turns one indexed frame's compressed data into a ``FramePatch``.
protocol FrameDecoder: Sendable {
    func decode(_ frame: FrameDescriptor) throws -> FramePatch
}

/// A frame's data that does not decode; the renderer adds the frame's index.
struct FrameDataError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
