/// Draws frames onto a canvas, one after another, with the disposal and blending rules
/// browsers use. One compositor serves GIF, APNG and WebP: formats hand it a ``FramePatch``
/// and the frame's ``FrameDescriptor``; the canvas rules live here alone.
///
/// - Before a frame is drawn, the previous frame is disposed of: `background` clears its
///   rectangle (clipped to the canvas) to transparent black; `previous` puts back what its
///   rectangle held before it was drawn (on the first frame that is the transparent canvas,
///   so "previous" there acts as "background").
/// - A frame is clipped to the canvas.
/// - Indexed (GIF) pixels: the transparent index leaves the canvas as it is; other indices
///   write their palette colour.
/// - RGBA pixels with blend `source` replace the rectangle; with blend `over` they are
///   alpha-composited, non-premultiplied: exactly for APNG, with Blink's integer arithmetic for
///   WebP (``FramePatch/Blending``).
public struct Compositor: Sendable {
    public private(set) var canvas: Canvas
    /// The disposal still owed by the last frame drawn, applied before the next one.
    private var owedDisposal: FrameDisposal = .none
    private var owedRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
    /// For a frame disposed with `previous`: what its (clipped) rectangle held before it.
    private var savedPixels: [UInt8] = []
    /// The rectangle the last frame's `background` disposal cleared, once settled, until the
    /// next frame is drawn (WebP blending leaves it alone).
    private var cleared = PixelRect(x: 0, y: 0, width: 0, height: 0)
    /// The part of the canvas drawn or disposed of since ``forgetChanges()`` (or since the
    /// compositor was made): every pixel outside it is as it was then.
    public private(set) var changed = PixelRect(x: 0, y: 0, width: 0, height: 0)

    /// A compositor whose canvas is `canvas`, ready for the next frame to be drawn.
    public init(canvas: Canvas) {
        self.canvas = canvas
    }

    /// A compositor over a transparent canvas.
    public init(width: Int, height: Int) {
        self.canvas = Canvas(width: width, height: height)
    }

    /// A compositor whose canvas is `output`, the composited result of `frame`, as if it had
    /// just drawn it: the frame's disposal is still owed. Not for a frame disposed with
    /// `previous`, whose disposal needs what lay beneath it.
    public init(output: Canvas, of frame: FrameDescriptor) {
        precondition(frame.disposal != .previous, "a frame disposed with 'previous' cannot be resumed from its output")
        self.canvas = output
        self.owedDisposal = frame.disposal
        self.owedRect = frame.rect.intersection(output.rect)
    }

    /// The canvas as the next frame will find it: the last frame's disposal applied. (A copy
    /// of the compositor after this call is a checkpoint from which the next frame draws exactly
    /// as it would here.)
    public mutating func canvasBeforeNextFrame() -> Canvas {
        settleDisposal()
        return canvas
    }

    /// Starts ``changed`` afresh: the canvas as it is now is what later changes are from.
    public mutating func forgetChanges() {
        changed = PixelRect(x: 0, y: 0, width: 0, height: 0)
    }

    /// Disposes of the previous frame, then draws `patch` as `frame` says. `startsClean` says
    /// the canvas is entirely transparent before this frame (``FrameDependencies/startsClean``):
    /// WebP blending does not blend then.
    public mutating func draw(_ patch: FramePatch, as frame: FrameDescriptor, startsClean: Bool = false) {
        settleDisposal()
        let cleared = self.cleared
        self.cleared = PixelRect(x: 0, y: 0, width: 0, height: 0)
        let area = patch.rect.intersection(canvas.rect)
        owedDisposal = frame.disposal
        owedRect = area
        if frame.disposal == .previous {
            savedPixels = canvas.copy(area)
        }
        guard !area.isEmpty else { return }
        changed = changed.union(area)
        switch patch.pixels {
        case .indexed(let indices, let palette, let transparentIndex):
            drawIndexed(indices, palette: palette, transparent: transparentIndex, patch: patch.rect, area: area)
        case .rgba(let pixels):
            if frame.blend == .source || frame.isOpaque {
                drawReplacing(pixels, patch: patch.rect, area: area)
            } else if patch.blending == .webp {
                // Blink blends a WebP frame only against the previous frame's canvas: not on a
                // clean canvas, and not inside the rectangle the previous frame's disposal cleared.
                drawBlendingWebP(pixels, patch: patch.rect, area: area, unblended: startsClean ? area : cleared)
            } else {
                drawBlending(pixels, patch: patch.rect, area: area)
            }
        }
    }

    private mutating func settleDisposal() {
        switch owedDisposal {
        case .none:
            break
        case .background:
            canvas.clear(owedRect)
            cleared = owedRect
            changed = changed.union(owedRect)
        case .previous:
            canvas.paste(savedPixels, into: owedRect)
            savedPixels = []
            changed = changed.union(owedRect)
        }
        owedDisposal = .none
    }

    private mutating func drawIndexed(
        _ indices: [UInt8], palette: [UInt32], transparent: Int?,
        patch: PixelRect, area: PixelRect
    ) {
        let width = canvas.width
        let skip = transparent ?? -1
        canvas.pixels.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt32.self)
            indices.withUnsafeBufferPointer { src in
                palette.withUnsafeBufferPointer { colours in
                    for y in area.y..<area.maxY {
                        var s = (y - patch.y) * patch.width + (area.x - patch.x)
                        var d = y * width + area.x
                        if skip < 0 {
                            for _ in 0..<area.width {
                                out[d] = colours[Int(src[s])]
                                s += 1
                                d += 1
                            }
                        } else {
                            for _ in 0..<area.width {
                                let index = Int(src[s])
                                if index != skip { out[d] = colours[index] }
                                s += 1
                                d += 1
                            }
                        }
                    }
                }
            }
        }
    }

    private mutating func drawReplacing(_ pixels: [UInt8], patch: PixelRect, area: PixelRect) {
        let rowBytes = area.width * 4
        forEachRow(of: pixels, patch: patch, area: area) { dst, src, _, s, d in
            (dst.baseAddress! + d).update(from: src.baseAddress! + s, count: rowBytes)
        }
    }

    private mutating func drawBlending(_ pixels: [UInt8], patch: PixelRect, area: PixelRect) {
        forEachRow(of: pixels, patch: patch, area: area) { dst, src, _, rowStart, canvasStart in
            var (s, d) = (rowStart, canvasStart)
            for _ in 0..<area.width {
                AlphaBlend.sourceOver(src, s, onto: dst, d)
                s += 4
                d += 4
            }
        }
    }

    /// Chromium's WebP blending: opaque pixels replace; inside `unblended` every pixel replaces
    /// (the canvas there is clean); elsewhere translucent pixels go over the canvas with
    /// ``AlphaBlend/webpSourceOver(_:_:onto:_:)``.
    private mutating func drawBlendingWebP(_ pixels: [UInt8], patch: PixelRect, area: PixelRect, unblended: PixelRect) {
        forEachRow(of: pixels, patch: patch, area: area) { dst, src, y, rowStart, canvasStart in
            var (s, d) = (rowStart, canvasStart)
            let rowUnblended = y >= unblended.y && y < unblended.maxY
            for x in area.x..<area.maxX {
                if src[s + 3] == 255 || (rowUnblended && x >= unblended.x && x < unblended.maxX) {
                    dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]; dst[d + 3] = src[s + 3]
                } else {
                    AlphaBlend.webpSourceOver(src, s, onto: dst, d)
                }
                s += 4
                d += 4
            }
        }
    }

    /// Calls `body` for each row `y` of `area` with the canvas's bytes, the RGBA patch's bytes, and
    /// the byte offsets of the row's first pixel in the patch (`s`) and on the canvas (`d`).
    @inline(__always)
    private mutating func forEachRow(
        of pixels: [UInt8], patch: PixelRect, area: PixelRect,
        _ body: (UnsafeMutableBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, _ y: Int, _ s: Int, _ d: Int) -> Void
    ) {
        let width = canvas.width
        canvas.pixels.withUnsafeMutableBufferPointer { dst in
            pixels.withUnsafeBufferPointer { src in
                for y in area.y..<area.maxY {
                    body(dst, src, y, ((y - patch.y) * patch.width + (area.x - patch.x)) * 4, (y * width + area.x) * 4)
                }
            }
        }
    }
}

/// Non-premultiplied "source over" for one RGBA pixel, computed exactly and rounded to
/// nearest: out_a = s_a + d_a(1 − s_a), out_c = (s_c s_a + d_c d_a (1 − s_a)) / out_a.
/// An opaque result is thus exact (as Chromium's is); a translucent one is within rounding.
enum AlphaBlend {
    @inline(__always)
    static func sourceOver(
        _ src: UnsafeBufferPointer<UInt8>, _ s: Int,
        onto dst: UnsafeMutableBufferPointer<UInt8>, _ d: Int
    ) {
        let sa = UInt32(src[s + 3])
        if sa == 0 { return }
        let da = UInt32(dst[d + 3])
        if sa == 255 || da == 0 {
            dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]; dst[d + 3] = src[s + 3]
            return
        }
        // Everything scaled by 255 to stay in integers: dstWeight = d_a (255 − s_a),
        // alpha255 = 255 × out_a.
        let dstWeight = da * (255 - sa)
        let alpha255 = sa * 255 + dstWeight
        for c in 0..<3 {
            let numerator = UInt32(src[s + c]) * sa * 255 + UInt32(dst[d + c]) * dstWeight
            dst[d + c] = UInt8(truncatingIfNeeded: (numerator + alpha255 / 2) / alpha255)
        }
        dst[d + 3] = UInt8(truncatingIfNeeded: (alpha255 + 127) / 255)
    }

    /// Blink's non-premultiplied source-over for WebP frames (a translucent source pixel over
    /// the previous canvas, whatever its alpha): the destination's weight is
    /// d_a × (256-scaled 1 − s_a) >> 8, the result's alpha s_a plus that weight, and each channel
    /// (s_c s_a + d_c weight) × ⌊2²⁴ / out_a⌋ >> 24 — truncated, so a channel may come out one
    /// below exact. A transparent source leaves the canvas as it is.
    @inline(__always)
    static func webpSourceOver(
        _ src: UnsafeBufferPointer<UInt8>, _ s: Int,
        onto dst: UnsafeMutableBufferPointer<UInt8>, _ d: Int
    ) {
        let sa = UInt32(src[s + 3])
        if sa == 0 { return }
        let inverse = 255 - sa
        let dstWeight = (UInt32(dst[d + 3]) * (inverse + inverse >> 7)) >> 8
        let alpha = sa + dstWeight
        let scale = (UInt32(1) << 24) / alpha
        for c in 0..<3 {
            let blended = UInt64(UInt32(src[s + c]) * sa + UInt32(dst[d + c]) * dstWeight) * UInt64(scale)
            dst[d + c] = UInt8(truncatingIfNeeded: blended >> 24)
        }
        dst[d + 3] = UInt8(truncatingIfNeeded: alpha)
    }
}
