/// Draws a ``StoryboardLayout``'s sheets, one at a time: each tile is its frame's rendition
/// (``StoryboardLayout/tileRendition``, scaled as the frame routes scale) centred on a
/// transparent cell; each sheet is encoded as PNG or WebP and handed to the caller before the
/// next is drawn, so only one sheet is held at once.
public enum StoryboardMaker {
    /// Draws every sheet of `layout` for `image`, calling `sheet` with each one's number and bytes
    /// in order. `cachedFrame` gives a frame's tile pixels (``StoryboardLayout/tileRendition``)
    /// when they are at hand already (a frame cache), else nil; `renderer` renders the others (a
    /// fresh one when nil), in order, and they are scaled on other threads (``ScaledFrameStream``).
    public static func make(
        _ image: AnimatedImage, layout: StoryboardLayout, renderer: FrameRenderer? = nil,
        png: PNGEncoder = PNGEncoder(), webp: WebPEncoder = WebPEncoder(),
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil },
        sheet: (Int, [UInt8]) throws -> Void
    ) throws {
        // In order, each frame once: checkpoints would never be used (nor are they budgeted).
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        let rendition = layout.tileRendition
        let offset = layout.frameOffset
        let frameRect = PixelRect(x: 0, y: 0, width: rendition.outputWidth, height: rendition.outputHeight)
        // Tiles of one frame are drawn once (`interval` may repeat a frame, on adjacent tiles).
        var indices: [Int] = []
        for tile in layout.tiles where indices.last != tile.index { indices.append(tile.index) }
        let frames = ScaledFrameStream(
            image, rendition: rendition, indices: indices, renderer: renderer, cachedFrame: cachedFrame)
        var last: (index: Int, pixels: [UInt8])? = nil
        for (number, description) in layout.sheets.enumerated() {
            var canvas = Canvas(width: description.width, height: description.height)
            for tile in layout.tiles[description.tiles] {
                let pixels: [UInt8]
                if let last, last.index == tile.index {
                    pixels = last.pixels
                } else {
                    guard let (index, frame) = try frames.next(), index == tile.index else {
                        preconditionFailure("the frames come in the tiles' order")
                    }
                    pixels = frame.pixels
                    last = (index, pixels)
                }
                canvas.paste(
                    pixels,
                    into: PixelRect(
                        x: tile.x + offset.x, y: tile.y + offset.y, width: frameRect.width, height: frameRect.height))
            }
            let bytes: [UInt8]
            switch layout.spec.format {
            case .png: bytes = try png.encode(canvas, colorSpace: image.colorSpace)
            case .webp: bytes = try webp.encode(canvas, quality: layout.spec.quality, colorSpace: image.colorSpace)
            case .avif:
                bytes = try AVIFFrameEncoder().encode(
                    canvas, quality: layout.spec.quality ?? AVIFFrameEncoder.defaultQuality, colorSpace: image.colorSpace)
            }
            try sheet(number, bytes)
        }
    }

    /// What drawing `layout`'s sheets may hold: the renderer's canvas and drawing a frame on it
    /// (no frame is encoded), scaling it, the frames scaled ahead, one sheet and its encoder's
    /// buffers (up to three times the sheet).
    public static func workingBytes(_ image: AnimatedImage, layout: StoryboardLayout) -> Int {
        let largestSheet = layout.sheets.map { $0.width * $0.height * 4 }.max() ?? 0
        return image.decodeMemory.canvasBytes + image.decodeMemory.frameDataBytes
            + RenditionEncoder.workingBytes(layout.tileRendition, width: image.canvasWidth, height: image.canvasHeight)
            + 4 * largestSheet + ScaledFrameStream.aheadBytes(image, rendition: layout.tileRendition)
    }
}
