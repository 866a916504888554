import Testing

@testable import AnimatedImage

/// The canvas rules, one by one, on a 4×1 canvas where each pixel tells what happened to it.
@Suite("Compositor")
struct CompositorTests {
    let red: UInt32 = 0xFF00_00FF, green: UInt32 = 0xFF00_FF00, blue: UInt32 = 0xFFFF_0000

    func descriptor(
        _ rect: PixelRect, disposal: FrameDisposal = .none, blend: FrameBlend = .over,
        opaque: Bool = false
    ) -> FrameDescriptor {
        FrameDescriptor(
            rect: rect, disposal: disposal, blend: blend, rawDelayMs: 0, isOpaque: opaque,
            source: .webp(range: 0..<0, hasAlpha: true))
    }

    func indexed(_ rect: PixelRect, _ indices: [UInt8], transparent: Int? = nil) -> FramePatch {
        var palette = [UInt32](repeating: 0xFF00_0000, count: 256)
        palette[1] = red
        palette[2] = green
        palette[3] = blue
        return FramePatch(rect: rect, pixels: .indexed(indices: indices, palette: palette, transparentIndex: transparent))
    }

    func rgba(_ rect: PixelRect, _ pixels: [[UInt8]]) -> FramePatch {
        FramePatch(rect: rect, pixels: .rgba(pixels.flatMap { $0 }))
    }

    func pixel(_ canvas: Canvas, _ x: Int) -> [UInt8] { Array(canvas.pixels[x * 4..<x * 4 + 4]) }

    let whole = PixelRect(x: 0, y: 0, width: 4, height: 1)

    @Test func disposalNoneKeepsTheFrame() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole))
        c.draw(indexed(PixelRect(x: 1, y: 0, width: 1, height: 1), [2]), as: descriptor(whole))
        #expect(pixel(c.canvas, 0) == [255, 0, 0, 255])
        #expect(pixel(c.canvas, 1) == [0, 255, 0, 255])
    }

    @Test func disposalBackgroundClearsTheRectangleToTransparent() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole))
        let middle = PixelRect(x: 1, y: 0, width: 2, height: 1)
        c.draw(indexed(middle, [2, 2]), as: descriptor(middle, disposal: .background))
        #expect(pixel(c.canvas, 1) == [0, 255, 0, 255])
        c.draw(indexed(PixelRect(x: 3, y: 0, width: 1, height: 1), [3]), as: descriptor(whole))
        #expect(pixel(c.canvas, 0) == [255, 0, 0, 255])
        #expect(pixel(c.canvas, 1) == [0, 0, 0, 0])
        #expect(pixel(c.canvas, 2) == [0, 0, 0, 0])
        #expect(pixel(c.canvas, 3) == [0, 0, 255, 255])
    }

    @Test func disposalPreviousRestoresWhatWasBeneath() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole))
        let middle = PixelRect(x: 1, y: 0, width: 2, height: 1)
        c.draw(indexed(middle, [2, 2]), as: descriptor(middle, disposal: .previous))
        c.draw(indexed(PixelRect(x: 3, y: 0, width: 1, height: 1), [3]), as: descriptor(whole))
        #expect((0..<3).map { pixel(c.canvas, $0) } == [[255, 0, 0, 255], [255, 0, 0, 255], [255, 0, 0, 255]])
        #expect(pixel(c.canvas, 3) == [0, 0, 255, 255])
    }

    @Test func previousOnTheFirstFrameActsAsBackground() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole, disposal: .previous))
        c.draw(indexed(PixelRect(x: 0, y: 0, width: 1, height: 1), [2]), as: descriptor(whole))
        #expect(pixel(c.canvas, 0) == [0, 255, 0, 255])
        #expect(pixel(c.canvas, 1) == [0, 0, 0, 0])
        #expect(pixel(c.canvas, 3) == [0, 0, 0, 0])
    }

    @Test func framesAreClippedToTheCanvas() {
        var c = Compositor(width: 4, height: 1)
        let overhang = PixelRect(x: 2, y: 0, width: 4, height: 2)
        c.draw(indexed(overhang, [1, 2, 3, 3, 3, 3, 3, 3]), as: descriptor(overhang))
        #expect(pixel(c.canvas, 1) == [0, 0, 0, 0])
        #expect(pixel(c.canvas, 2) == [255, 0, 0, 255])
        #expect(pixel(c.canvas, 3) == [0, 255, 0, 255])
        // Entirely outside: nothing drawn, nothing disposed.
        let outside = PixelRect(x: 9, y: 9, width: 2, height: 2)
        c.draw(indexed(outside, [1, 1, 1, 1]), as: descriptor(outside, disposal: .background))
        c.draw(indexed(outside, [1, 1, 1, 1]), as: descriptor(outside))
        #expect(pixel(c.canvas, 2) == [255, 0, 0, 255])
    }

    @Test func transparentIndexLeavesTheCanvasAlone() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole))
        c.draw(indexed(whole, [2, 0, 2, 0], transparent: 0), as: descriptor(whole))
        #expect(
            (0..<4).map { pixel(c.canvas, $0) } == [[0, 255, 0, 255], [255, 0, 0, 255], [0, 255, 0, 255], [255, 0, 0, 255]])
    }

    @Test func withoutATransparentIndexEveryIndexPaints() {
        var c = Compositor(width: 4, height: 1)
        c.draw(indexed(whole, [1, 1, 1, 1]), as: descriptor(whole))
        c.draw(indexed(whole, [0, 0, 0, 0]), as: descriptor(whole))
        #expect(pixel(c.canvas, 0) == [0, 0, 0, 255])
    }

    @Test func blendSourceReplacesAlphaToo() {
        var c = Compositor(width: 4, height: 1)
        c.draw(rgba(whole, [[255, 0, 0, 255], [255, 0, 0, 255], [255, 0, 0, 255], [255, 0, 0, 255]]), as: descriptor(whole))
        let one = PixelRect(x: 1, y: 0, width: 1, height: 1)
        c.draw(rgba(one, [[0, 0, 255, 0]]), as: descriptor(one, blend: .source))
        #expect(pixel(c.canvas, 1) == [0, 0, 255, 0])
    }

    @Test func blendOverCompositesNonPremultiplied() {
        var c = Compositor(width: 4, height: 1)
        c.draw(rgba(whole, [[255, 0, 0, 255], [255, 0, 0, 255], [0, 0, 0, 0], [255, 0, 0, 255]]), as: descriptor(whole))
        c.draw(
            rgba(whole, [[0, 0, 255, 0], [0, 0, 255, 128], [0, 0, 255, 128], [0, 255, 0, 2]]), as: descriptor(whole, blend: .over)
        )
        // Fully transparent source: canvas unchanged.
        #expect(pixel(c.canvas, 0) == [255, 0, 0, 255])
        // Half blue over opaque red: opaque result, channels mixed by 128/255.
        #expect(pixel(c.canvas, 1) == [127, 0, 128, 255])
        // Over a transparent pixel the source shows as it is.
        #expect(pixel(c.canvas, 2) == [0, 0, 255, 128])
        // A near-transparent pixel over opaque red: still opaque (Chromium gives exactly 255).
        #expect(pixel(c.canvas, 3) == [253, 2, 0, 255])
    }

    @Test func translucentOverTranslucent() {
        var c = Compositor(width: 1, height: 1)
        let one = PixelRect(x: 0, y: 0, width: 1, height: 1)
        c.draw(rgba(one, [[255, 0, 0, 128]]), as: descriptor(one))
        c.draw(rgba(one, [[0, 0, 255, 128]]), as: descriptor(one))
        // a = 128 + 128 × 127/255 ≈ 191.75; b = 255 × 128 / 191.75 ≈ 170.2; r ≈ 84.8
        #expect(pixel(c.canvas, 0) == [85, 0, 170, 192])
    }

    @Test func opaqueRGBAFramesReplaceWhateverTheBlend() {
        var c = Compositor(width: 1, height: 1)
        let one = PixelRect(x: 0, y: 0, width: 1, height: 1)
        c.draw(rgba(one, [[9, 9, 9, 255]]), as: descriptor(one))
        c.draw(rgba(one, [[1, 2, 3, 255]]), as: descriptor(one, blend: .over, opaque: true))
        #expect(pixel(c.canvas, 0) == [1, 2, 3, 255])
    }

    func webp(_ rect: PixelRect, _ pixels: [[UInt8]]) -> FramePatch {
        FramePatch(rect: rect, pixels: .rgba(pixels.flatMap { $0 }), blending: .webp)
    }

    /// Chromium's WebP blend, measured with browser-frames (an img2webp -lossy animation): the
    /// source [195, 39, 33, 96] over [198, 39, 43, 156] shows [196, 38, 38, 193]; exact
    /// arithmetic gives [197, 39, 38, 193].
    @Test func webpBlendingIsChromiumsIntegerArithmetic() {
        var c = Compositor(width: 4, height: 1)
        c.draw(
            rgba(whole, [[198, 39, 43, 156], [10, 20, 30, 0], [200, 100, 50, 255], [1, 2, 3, 4]]),
            as: descriptor(whole, blend: .source))
        c.draw(webp(whole, [[195, 39, 33, 96], [200, 120, 60, 96], [9, 9, 9, 0], [7, 7, 7, 255]]), as: descriptor(whole))
        #expect(pixel(c.canvas, 0) == [196, 38, 38, 193])
        // Over a transparent pixel of the previous canvas it still blends (and truncates).
        #expect(pixel(c.canvas, 1) == [199, 119, 59, 96])
        // A transparent source leaves the canvas; an opaque one replaces it.
        #expect(pixel(c.canvas, 2) == [200, 100, 50, 255])
        #expect(pixel(c.canvas, 3) == [7, 7, 7, 255])
    }

    /// Where the previous frame's disposal cleared the canvas, and on a clean canvas, Chromium
    /// draws a WebP frame's pixels as they are.
    @Test func webpBlendingLeavesClearedAndCleanCanvasesAlone() {
        var c = Compositor(width: 4, height: 1)
        let left = PixelRect(x: 0, y: 0, width: 2, height: 1)
        c.draw(
            rgba(whole, [[50, 50, 50, 200], [50, 50, 50, 200], [50, 50, 50, 0], [50, 50, 50, 0]]),
            as: descriptor(whole, blend: .source))
        c.draw(rgba(left, [[60, 60, 60, 255], [60, 60, 60, 255]]), as: descriptor(left, disposal: .background, blend: .source))
        let translucent: [UInt8] = [200, 120, 60, 96]
        var checkpoint = c
        _ = checkpoint.canvasBeforeNextFrame()  // a checkpoint remembers what was cleared
        for var compositor in [c, checkpoint] {
            compositor.draw(webp(whole, Array(repeating: translucent, count: 4)), as: descriptor(whole))
            #expect(pixel(compositor.canvas, 0) == translucent)  // cleared: drawn as it is
            #expect(pixel(compositor.canvas, 1) == translucent)
            #expect(pixel(compositor.canvas, 2) == [199, 119, 59, 96])  // kept, transparent: blended
        }
        var clean = Compositor(width: 4, height: 1)
        clean.draw(webp(whole, Array(repeating: translucent, count: 4)), as: descriptor(whole), startsClean: true)
        #expect(pixel(clean.canvas, 2) == translucent)
    }
}
