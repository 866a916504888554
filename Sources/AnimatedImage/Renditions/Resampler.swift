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
    /// Whether scaling a `width`×`height` canvas to `scaledWidth`×`scaledHeight` box-shrinks first
    /// (a reduction by more than 40×: Sources/CResample/box_shrink.c takes each block's mean, then
    /// the kernel reduces what is left).
    public static func shrinksFirst(width: Int, height: Int, scaledWidth: Int, scaledHeight: Int) -> Bool {
        flipbook_resample_shrinks_first(
            Int32(clamping: width), Int32(clamping: height), Int32(clamping: scaledWidth), Int32(clamping: scaledHeight)) != 0
    }

    /// `canvas` scaled to `width`×`height`.
    public static func scale(_ canvas: Canvas, width: Int, height: Int) throws -> Canvas {
        guard width > 0, height > 0 else { throw ResamplingError(message: "cannot scale to \(width)×\(height)") }
        if width == canvas.width && height == canvas.height { return canvas }
        let opaque = canvas.isOpaque  // then the scaler skips premultiplying
        return try resampled(width: width, height: height) { target, text, size in
            canvas.pixels.withUnsafeBufferPointer { source in
                flipbook_resample_rgba(
                    source.baseAddress, Int32(canvas.width), Int32(canvas.height), target, Int32(width), Int32(height),
                    opaque ? 1 : 0, text, size)
            }
        }
    }

    /// A `width`×`height` canvas filled by `call` (given the pixels to fill, and a buffer and its
    /// size for the message of a failure), or its message thrown.
    private static func resampled(
        width: Int, height: Int, _ call: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) throws -> Canvas {
        var out = [UInt8](repeating: 0, count: width * height * 4)
        var message = [CChar](repeating: 0, count: 256)
        let status = out.withUnsafeMutableBufferPointer { target in
            message.withUnsafeMutableBufferPointer { text in call(target.baseAddress!, text.baseAddress!, text.count) }
        }
        guard status == 0 else {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw ResamplingError(message: text)
        }
        return Canvas(width: width, height: height, pixels: out)
    }

    /// When a frame differs from the one before only inside `changed`, the part of its
    /// `width`×`height` scaling that can differ from the previous frame's: the output pixels
    /// whose kernel windows reach into `changed` (empty when none do); every other pixel is the
    /// previous frame's. Nil when the scaling's output pixels are not made apart (it enlarges,
    /// or box-shrinks first): scale the whole frame.
    public static func affected(
        by changed: PixelRect, sourceWidth: Int, sourceHeight: Int, width: Int, height: Int
    ) -> PixelRect? {
        rectangle(sourceWidth, sourceHeight, width, height, changed, flipbook_resample_affected)
    }

    /// The rectangle `call` (one of the C rectangle questions) fills for these sizes and `rect`,
    /// or nil when it answers that the scaling is not a reduction by the kernel alone.
    private static func rectangle(
        _ sourceWidth: Int, _ sourceHeight: Int, _ width: Int, _ height: Int, _ rect: PixelRect,
        _ call: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, UnsafeMutablePointer<Int32>?) -> Int32
    ) -> PixelRect? {
        var out = [Int32](repeating: 0, count: 4)
        let known = call(
            Int32(clamping: sourceWidth), Int32(clamping: sourceHeight), Int32(clamping: width), Int32(clamping: height),
            Int32(clamping: rect.x), Int32(clamping: rect.y), Int32(clamping: rect.width), Int32(clamping: rect.height),
            &out)
        guard known == 1 else { return nil }
        return PixelRect(x: Int(out[0]), y: Int(out[1]), width: Int(out[2]), height: Int(out[3]))
    }

    /// The rows of a `sourceWidth`×`sourceHeight` canvas that ``scale(_:width:height:only:opaque:)``
    /// reads to make `part` of its `width`×`height` scaling; nil as for ``affected(by:sourceWidth:sourceHeight:width:height:)``.
    public static func rowsRead(
        for part: PixelRect, sourceWidth: Int, sourceHeight: Int, width: Int, height: Int
    ) -> Range<Int>? {
        rectangle(sourceWidth, sourceHeight, width, height, part, flipbook_resample_reach).map { $0.y..<$0.maxY }
    }

    /// `part` of `canvas` scaled to `width`×`height` — exactly those pixels of
    /// ``scale(_:width:height:)``'s output — as a canvas of `part`'s size. `opaque` must say
    /// whether every pixel of `canvas` is opaque (as ``scale(_:width:height:)`` finds out: ``Canvas/isOpaque``). Only for
    /// scalings ``affected(by:sourceWidth:sourceHeight:width:height:)`` accepts; reads only
    /// ``rowsRead(for:sourceWidth:sourceHeight:width:height:)``.
    public static func scale(_ canvas: Canvas, width: Int, height: Int, only part: PixelRect, opaque: Bool) throws -> Canvas {
        try resampled(width: part.width, height: part.height) { target, text, size in
            canvas.pixels.withUnsafeBufferPointer { source in
                flipbook_resample_rgba_rect(
                    source.baseAddress, Int32(canvas.width), Int32(canvas.height), target, Int32(width), Int32(height),
                    opaque ? 1 : 0, Int32(part.x), Int32(part.y), Int32(part.width), Int32(part.height), text, size)
            }
        }
    }

    /// The bytes scaling a `width`×`height` canvas may allocate besides the source and the
    /// result: a premultiplied copy of the source, the horizontally reduced frame (no larger),
    /// and the kernels' tables and a row of sums (or, shrinking first, the shrunk frame, at most
    /// half the source, the kernel's passes over it and a strip of sums: 64 KiB for blocks up to
    /// 4,096 pixels wide).
    public static func workingBytes(width: Int, height: Int) -> Int { width * height * 8 + (1 << 20) }
}

/// A frame could not be scaled (pixman failed, or memory ran out).
public struct ResamplingError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "scaling failed: \(message)" }
}
