/// The pixel rules by which libwebp's `WebPAnimEncoder` (1.2) turns a frame into a candidate
/// sub-frame, on frames held as ARGB words (`0xAARRGGBB`, as libwebp's pictures hold them):
/// the rectangle that changed since a previous canvas (exactly, then within a quality-dependent
/// tolerance), snapped to even offsets; whether the sub-frame may be blended over the canvas;
/// and, when blended, 8×8 blocks close enough to what the canvas shows made transparent. Each
/// rule follows libwebp's observable behaviour to the pixel (its quirks included), so that
/// ``ParallelAnimatedWebPEncoder`` makes the bytes `WebPAnimEncoder` makes.
struct AnimationCandidateGeometry {
    let width: Int
    let height: Int
    /// The largest per-channel difference (scaled by alpha) still "similar" in lossy mode.
    let maxDifference: Int

    init(width: Int, height: Int, quality: Float) {
        self.width = width
        self.height = height
        let root = (Double(quality) / 100).squareRoot()
        maxDifference = Int(31 * (1 - root) + root + 0.5)
    }

    var canvas: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }

    /// Whether `canvasPixel` (what the canvas shows) and `framePixel` are alike enough that the
    /// lossy encoder may leave the canvas's: the same alpha, colours within the tolerance
    /// (weighted by the frame pixel's alpha).
    @inline(__always)
    func similar(_ canvasPixel: UInt32, _ framePixel: UInt32) -> Bool {
        guard canvasPixel >> 24 == framePixel >> 24 else { return false }
        let alpha = Int(framePixel >> 24)
        let limit = maxDifference * 255
        @inline(__always) func close(_ shift: UInt32) -> Bool {
            abs(Int((canvasPixel >> shift) & 0xFF) - Int((framePixel >> shift) & 0xFF)) * alpha <= limit
        }
        return close(16) && close(8) && close(0)
    }

    /// The change rectangles of `frame` over `previous` (both whole canvases): the exact one and,
    /// seeded by it, the lossy one; each empty when nothing changed and `emptyAllowed`, else at
    /// least 1×1 at the origin, and snapped to even offsets.
    func changeRects(
        from previous: UnsafeBufferPointer<UInt32>, to frame: UnsafeBufferPointer<UInt32>, emptyAllowed: Bool
    ) -> (exact: PixelRect, lossy: PixelRect) {
        var exact = shrink(canvas, from: previous, to: frame, tolerant: false)
        if exact.isEmpty {
            if emptyAllowed { return (exact, exact) }
            exact = PixelRect(x: 0, y: 0, width: 1, height: 1)
        }
        exact = Self.snappedToEvenOffsets(exact)
        var lossy = shrink(exact, from: previous, to: frame, tolerant: true)
        if lossy.isEmpty {
            if emptyAllowed { return (exact, lossy) }
            lossy = PixelRect(x: 0, y: 0, width: 1, height: 1)
        }
        return (exact, Self.snappedToEvenOffsets(lossy))
    }

    /// `rect` with its unchanged outer columns (left, then right) and rows (top, then bottom)
    /// dropped; empty (at the origin) when nothing in it changed.
    func shrink(
        _ rect: PixelRect, from previous: UnsafeBufferPointer<UInt32>, to frame: UnsafeBufferPointer<UInt32>,
        tolerant: Bool
    ) -> PixelRect {
        func same(_ i: Int) -> Bool { tolerant ? similar(previous[i], frame[i]) : previous[i] == frame[i] }
        func columnSame(_ x: Int, _ r: PixelRect) -> Bool { (r.y..<r.maxY).allSatisfy { same($0 * width + x) } }
        func rowSame(_ y: Int, _ r: PixelRect) -> Bool { (r.x..<r.maxX).allSatisfy { same(y * width + $0) } }
        var r = rect
        while r.width > 0 && columnSame(r.x, r) {
            r.x += 1
            r.width -= 1
        }
        while r.width > 0 && columnSame(r.maxX - 1, r) { r.width -= 1 }
        while r.width > 0 && r.height > 0 && rowSame(r.y, r) {
            r.y += 1
            r.height -= 1
        }
        while r.width > 0 && r.height > 0 && rowSame(r.maxY - 1, r) { r.height -= 1 }
        return r.isEmpty ? PixelRect(x: 0, y: 0, width: 0, height: 0) : r
    }

    /// `rect` grown left and up by a pixel where its offset is odd (WebP frames sit at even
    /// offsets).
    static func snappedToEvenOffsets(_ rect: PixelRect) -> PixelRect {
        PixelRect(x: rect.x & ~1, y: rect.y & ~1, width: rect.width + (rect.x & 1), height: rect.height + (rect.y & 1))
    }

    /// Whether blending `rect` of `frame` over `previous` can show the frame: every pixel that
    /// is not opaque is one the canvas already shows (within the tolerance when `tolerant`,
    /// for lossy candidates; exactly for lossless ones).
    func blendingPossible(
        over previous: UnsafeBufferPointer<UInt32>, _ frame: UnsafeBufferPointer<UInt32>, in rect: PixelRect,
        tolerant: Bool
    ) -> Bool {
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let i = y * width + x
                guard frame[i] >> 24 != 0xFF else { continue }
                if tolerant ? !similar(previous[i], frame[i]) : previous[i] != frame[i] { return false }
            }
        }
        return true
    }

    /// `rect` of `frame`, packed, with — when `blended` — each whole 8×8 block (on the canvas's
    /// 8-pixel grid, starting at the first grid line after the rectangle's top and left edges,
    /// as libwebp does) whose pixels the opaque canvas shows alike replaced by transparent
    /// pixels of the canvas block's average colour: flat, so they cost almost nothing, and
    /// showing the canvas through.
    func subFrame(
        of frame: UnsafeBufferPointer<UInt32>, in rect: PixelRect, blendedOver previous: UnsafeBufferPointer<UInt32>?
    ) -> [UInt32] {
        var pixels = [UInt32](unsafeUninitializedCapacity: rect.area) { buffer, count in
            for row in 0..<rect.height {
                let from = frame.baseAddress! + (rect.y + row) * width + rect.x
                (buffer.baseAddress! + row * rect.width).initialize(from: from, count: rect.width)
            }
            count = rect.area
        }
        guard let previous else { return pixels }
        let block = 8
        let xs = stride(from: (rect.x + block) & ~(block - 1), to: rect.maxX & ~(block - 1), by: block)
        let ys = stride(from: (rect.y + block) & ~(block - 1), to: rect.maxY & ~(block - 1), by: block)
        for top in ys {
            for left in xs {
                var sums = (0, 0, 0)
                var alike = true
                blockScan: for y in top..<(top + block) {
                    for x in left..<(left + block) {
                        let canvasPixel = previous[y * width + x]
                        let framePixel = pixels[(y - rect.y) * rect.width + (x - rect.x)]
                        guard canvasPixel >> 24 == 0xFF, similar(canvasPixel, framePixel) else {
                            alike = false
                            break blockScan
                        }
                        sums.0 += Int((canvasPixel >> 16) & 0xFF)
                        sums.1 += Int((canvasPixel >> 8) & 0xFF)
                        sums.2 += Int(canvasPixel & 0xFF)
                    }
                }
                guard alike else { continue }
                let count = block * block
                let colour = UInt32(sums.0 / count) << 16 | UInt32(sums.1 / count) << 8 | UInt32(sums.2 / count)
                for y in top..<(top + block) {
                    for x in left..<(left + block) { pixels[(y - rect.y) * rect.width + (x - rect.x)] = colour }
                }
            }
        }
        return pixels
    }

    /// `rect` of `frame`, packed, with — when `blended` — every pixel the canvas already shows
    /// made transparent black (lossless: what shows through is exactly the canvas).
    func exactSubFrame(
        of frame: UnsafeBufferPointer<UInt32>, in rect: PixelRect, blendedOver previous: UnsafeBufferPointer<UInt32>?
    ) -> [UInt32] {
        var pixels = subFrame(of: frame, in: rect, blendedOver: nil)
        guard let previous else { return pixels }
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let i = (y - rect.y) * rect.width + (x - rect.x)
                if previous[y * width + x] == pixels[i] { pixels[i] = 0 }
            }
        }
        return pixels
    }

    /// `canvas` with `rect` cleared to transparent black (a frame disposed to the background).
    static func clearing(_ rect: PixelRect, in canvas: inout [UInt32], width: Int) {
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX { canvas[y * width + x] = 0 }
        }
    }

    /// `canvas`'s RGBA bytes as ARGB words in `words` (resized to fit; its storage reused).
    static func convert(_ canvas: Canvas, toARGB words: inout [UInt32]) {
        let count = canvas.width * canvas.height
        if words.count != count { words = [UInt32](repeating: 0, count: count) }
        words.withUnsafeMutableBufferPointer { words in
            canvas.pixels.withUnsafeBytes { raw in
                let rgba = raw.bindMemory(to: UInt32.self)  // little-endian: 0xAABBGGRR
                for i in 0..<count {
                    let p = rgba[i]
                    words[i] = (p & 0xFF00_FF00) | (p & 0xFF) << 16 | (p >> 16) & 0xFF
                }
            }
        }
    }
}
