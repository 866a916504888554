import CResample

/// Scales composited frames for renditions: a Lanczos-3 kernel applied to each axis,
/// horizontally first, on premultiplied alpha (no dark or light fringe where transparency
/// changes), in the frame's own sRGB values (as browsers and imgproxy scale), deterministic.
/// Reductions follow Pillow's LANCZOS conventions and arithmetic, the window clipped and
/// renormalised at the frame's edges (Sources/CResample), enlargements use pixman. Each frame is
/// scaled on its own, after compositing at full canvas size, so nothing bleeds between frames.
/// Safe to call from several threads at once. (The methods and their quality: BENCHMARKS.md,
/// "Resampling library".)
public enum Resampler {
    /// Starts libvips now rather than at the first frame that needs it (only a reduction by more
    /// than 40× does: libvips box-shrinks it first): call it early, while the process has one
    /// thread (it sets `VIPSHOME`, unless set, so that libvips loads none of its modules —
    /// Flipbook only resizes). True when libvips started.
    @discardableResult
    public static func start() -> Bool { flipbook_resample_start() == 0 }

    /// Whether scaling a `width`×`height` canvas to `scaledWidth`×`scaledHeight` uses libvips (a
    /// reduction by more than 40×): a short-lived process (the CLI) starts it only then.
    public static func usesLibvips(width: Int, height: Int, scaledWidth: Int, scaledHeight: Int) -> Bool {
        flipbook_resample_uses_libvips(
            Int32(clamping: width), Int32(clamping: height), Int32(clamping: scaledWidth), Int32(clamping: scaledHeight)) != 0
    }

    /// `canvas` scaled to `width`×`height`.
    public static func scale(_ canvas: Canvas, width: Int, height: Int) throws -> Canvas {
        guard width > 0, height > 0 else { throw ResamplingError(message: "cannot scale to \(width)×\(height)") }
        if width == canvas.width && height == canvas.height { return canvas }
        let opaque = PNGEncoder.isOpaque(canvas.pixels)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        var message = [CChar](repeating: 0, count: 256)
        let status = canvas.pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                message.withUnsafeMutableBufferPointer { text in
                    flipbook_resample_rgba(
                        source.baseAddress, Int32(canvas.width), Int32(canvas.height), target.baseAddress,
                        Int32(width), Int32(height), opaque ? 1 : 0, text.baseAddress, text.count)
                }
            }
        }
        guard status == 0 else {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw ResamplingError(message: text)
        }
        return Canvas(width: width, height: height, pixels: out)
    }

    /// The bytes scaling a `width`×`height` canvas may allocate besides the source and the
    /// result: a premultiplied copy of the source, the horizontally reduced frame (no larger),
    /// and the kernels' tables and a row of sums (or libvips's buffers for its box shrink).
    public static func workingBytes(width: Int, height: Int) -> Int { width * height * 8 + (1 << 20) }

    /// The libvips version linked.
    public static var libraryVersion: String { String(cString: flipbook_resample_library_version()) }
}

/// A frame could not be scaled (libvips or pixman failed, or memory ran out).
public struct ResamplingError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "scaling failed: \(message)" }
}
