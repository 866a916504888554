// libFuzzer entry for the PNG writer (PNGEncoder: palette search, scanlines, libdeflate, chunks),
// linked with AnimatedImage by fuzz/run.sh. Canvases come from the input in one of two ways:
//   - an input that is an image file: up to 4 of its frames, rendered under FuzzLimits.decoding,
//     compression level = input size % 10;
//   - anything else: byte 0 = compression level, byte 1 = how pixels are made (RGBA, opaque RGB,
//     a palette of 2, 4, 16 or 256 colours given in the input, or alpha 0 with any colour),
//     bytes 2–3 = width; the rest are pixels (rows filled in order, the last one repeated).
// Each canvas is written as PNG and the run traps when:
//   - writing fails or crashes;
//   - libpng does not read back the same pixels, byte for byte (alpha-0 colours included);
//   - Flipbook's own reader (indexer, libpng, compositor) does not see a one-frame still PNG of
//     the same size and pixels (a side past DecodeLimits.maxDimension must be refused naming
//     that limit, and is read with the limit raised);
//   - the colour type is not the one the writer promises: palette when ≤ 256 colours, else RGB
//     when every pixel is opaque, else RGBA.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 4 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let bytes = imageBytes(data, size)
    if ImageFormat.sniff(bytes) != nil {
        guard let image = try? AnimatedImage(bytes: bytes, limits: FuzzLimits.decoding, verification: .structural) else {
            return 0
        }
        let renderer = FrameRenderer(image: image)
        for i in 0..<min(4, image.frameCount) {
            guard let canvas = try? renderer.render(i) else { break }
            roundTrip(canvas, level: size % 10)
        }
    } else {
        roundTrip(rawCanvas(input), level: Int(input[0]) % 10)
    }
    return 0
}

/// A canvas made from the input's bytes (see the header).
func rawCanvas(_ input: UnsafeBufferPointer<UInt8>) -> Canvas {
    let mode = Int(input[1]) % 7
    let width = 1 + (Int(input[2]) | Int(input[3]) << 8) % 512
    let body = Array(input[4...])
    var pixels: [UInt8] = []
    switch mode {
    case 0:  // any RGBA
        pixels = Array(body.prefix(body.count / 4 * 4))
    case 1:  // opaque RGB
        for start in stride(from: 0, to: body.count - 2, by: 3) {
            pixels += [body[start], body[start + 1], body[start + 2], 255]
        }
    case 2, 3, 4, 5:  // a palette of 2, 4, 16 or 256 colours, then one index byte per pixel
        let colors = [2, 4, 16, 256][mode - 2]
        let paletteBytes = min(body.count / 4 * 4, colors * 4)
        let palette = Array(body.prefix(paletteBytes))
        guard !palette.isEmpty else { break }
        for index in body.dropFirst(paletteBytes) {
            let entry = Int(index) % (palette.count / 4) * 4
            pixels += palette[entry..<entry + 4]
        }
    default:  // alpha 0 under any colour
        for start in stride(from: 0, to: body.count - 2, by: 3) {
            pixels += [body[start], body[start + 1], body[start + 2], 0]
        }
    }
    if pixels.isEmpty { pixels = [0, 0, 0, 0] }
    let pixelCount = pixels.count / 4
    let height = (pixelCount + width - 1) / width
    let missing = width * height - pixelCount
    if missing > 0 {
        let lastRow = Array(pixels.suffix(min(pixelCount, width) * 4))
        var filler: [UInt8] = []
        while filler.count < missing * 4 { filler += lastRow }
        pixels += filler.prefix(missing * 4)
    }
    return Canvas(width: width, height: height, pixels: pixels)
}

func roundTrip(_ canvas: Canvas, level: Int) {
    let png: [UInt8]
    do {
        png = try PNGEncoder(compressionLevel: level).encode(canvas)
    } catch {
        fatalError("fuzz invariant: a \(canvas.width)×\(canvas.height) canvas could not be written: \(error)")
    }
    // IHDR's colour type is byte 25 of the file (signature 8, length 4, type 4, width 4, height 4, depth 1).
    check(png.count > 33, "a \(png.count)-byte PNG")
    let colorType = png[25]
    let expected: UInt8 =
        PaletteQuantizer.exactPalette(of: canvas) != nil
        ? 3
        : canvas.isOpaque ? 2 : 6
    check(colorType == expected, "colour type \(colorType), expected \(expected)")
    do {
        let pixels = try APNGFrameDecoder.decodeRGBA(png, width: canvas.width, height: canvas.height)
        check(pixels == canvas.pixels, "libpng reads other pixels than were written (level \(level), type \(colorType))")
    } catch {
        fatalError("fuzz invariant: libpng cannot read the PNG written: \(error)")
    }
    // Flipbook's reader refuses a side past `maxDimension` (Chromium's 32,767) before reading a
    // pixel; the writer has no such bound and a raw canvas one pixel wide can be taller, so such
    // a PNG must be refused naming that limit, then read with the limit raised to its size.
    var limits = DecodeLimits.default
    let side = max(canvas.width, canvas.height)
    if side > limits.maxDimension {
        do {
            _ = try AnimatedImage(bytes: png, limits: limits, verification: .structural)
            fatalError("fuzz invariant: a \(canvas.width)×\(canvas.height) PNG passed maxDimension")
        } catch AnimatedImageError.limitExceeded(.maxDimension, let value, _) {
            check(value == side, "maxDimension refused \(value), the side is \(side)")
        } catch {
            fatalError("fuzz invariant: a \(canvas.width)×\(canvas.height) PNG refused with \(error)")
        }
        limits.maxDimension = side
    }
    do {
        let image = try AnimatedImage(bytes: png, limits: limits, verification: .full)
        check(
            image.format == .png && image.frameCount == 1 && image.canvasWidth == canvas.width
                && image.canvasHeight == canvas.height,
            "the PNG reads as \(image.format) \(image.canvasWidth)×\(image.canvasHeight) with \(image.frameCount) frames")
        check(try FrameRenderer(image: image).render(0) == canvas, "Flipbook reads other pixels than it wrote")
    } catch {
        fatalError("fuzz invariant: Flipbook cannot read the PNG it wrote: \(error)")
    }
}
