/// Builds the ``ImageIndex`` of a GIF in one pass over its records, skipping the LZW data
/// sub-blocks without decoding them.
///
/// The rules follow Chromium: the canvas is the logical screen grown to cover the first
/// frame's rectangle; the graphic control extension nearest before an image applies to it
/// alone; the last NETSCAPE2.0/ANIMEXTS1.0 loop count in the file wins; an unknown record
/// or the end of the data ends the frame list (what came before is kept, `truncated` is set).
enum GIFIndexer {
    static func index(_ bytes: ImageBytes, limits: DecodeLimits) throws -> ImageIndex {
        var reader = ByteReader(bytes, offset: 6)
        let screen = try readScreen(&reader, limits: limits)
        var records = RecordScan(canvasWidth: screen.width, canvasHeight: screen.height)
        try records.read(&reader, limits: limits)
        return ImageIndex(
            format: .gif, canvasWidth: records.canvasWidth, canvasHeight: records.canvasHeight,
            frames: records.frames, playCount: records.playCount, truncated: records.truncated,
            header: .gif(screen.header))
    }

    /// The logical screen descriptor and the global colour table: the screen's size (checked
    /// against the limits) and where the header ends.
    private static func readScreen(_ reader: inout ByteReader, limits: DecodeLimits) throws -> (
        width: Int, height: Int, header: GIFHeader
    ) {
        guard let screenWidth = reader.u16le(), let screenHeight = reader.u16le(),
            let flags = reader.u8(), reader.skip(2)
        else {
            throw AnimatedImageError.malformed(.gif, "the logical screen descriptor is cut short")
        }
        guard screenWidth > 0, screenHeight > 0 else {
            throw AnimatedImageError.malformed(.gif, "the logical screen is \(screenWidth)×\(screenHeight)")
        }
        try Limits.checkCanvas(width: Int(screenWidth), height: Int(screenHeight), limits: limits)
        var globalPalette: Range<Int>? = nil
        if flags & 0x80 != 0 {
            let size = 3 << (Int(flags & 7) + 1)
            let start = reader.offset
            guard reader.skip(size) else {
                throw AnimatedImageError.malformed(.gif, "the global colour table is cut short")
            }
            globalPalette = start..<reader.offset
        }
        return (Int(screenWidth), Int(screenHeight), GIFHeader(headerEnd: reader.offset, globalPalette: globalPalette))
    }

    /// The records after the header, read in one pass: the frames found, the loop count and
    /// whether the file ended (or stopped being a GIF) before its trailer.
    private struct RecordScan {
        var canvasWidth: Int
        var canvasHeight: Int
        var frames: [FrameDescriptor] = []
        var pendingControl: GraphicControl? = nil
        var loopCount: Int? = nil
        var truncated = false

        /// A GIF without a NETSCAPE loop extension plays once; a value N > 0 plays N + 1 times.
        var playCount: Int {
            guard let loops = loopCount else { return 1 }
            return loops == 0 ? 0 : loops + 1
        }

        /// Reads records up to the trailer; an unknown record or the end of the data ends the
        /// frame list (`truncated`).
        mutating func read(_ reader: inout ByteReader, limits: DecodeLimits) throws {
            while true {
                guard let introducer = reader.u8() else { truncated = true; return }
                switch introducer {
                case 0x21:
                    guard readExtension(&reader) else { truncated = true; return }
                case 0x2C:
                    guard try readImage(&reader, limits: limits) else { truncated = true; return }
                case 0x3B:
                    return
                default:
                    // Not a GIF record: browsers stop here and keep the frames before it.
                    truncated = true
                    return
                }
            }
        }

        /// An extension (after its introducer): a graphic control for the next image, or a loop
        /// count; false when the data ends inside it.
        private mutating func readExtension(_ reader: inout ByteReader) -> Bool {
            let bytes = reader.bytes
            guard let label = reader.u8(), let blocks = GIFIndexer.readSubBlocks(&reader) else { return false }
            if label == 0xF9, let first = blocks.first, first.count >= 4 {
                pendingControl = GraphicControl(bytes, first.lowerBound)
            } else if label == 0xFF, blocks.count >= 2, blocks[0].count == 11,
                GIFIndexer.isLoopApplication(bytes[blocks[0]])
            {
                let data = blocks[1]
                if data.count >= 3, bytes[data.lowerBound] == 1 {
                    loopCount = Int(bytes[data.lowerBound + 1]) | Int(bytes[data.lowerBound + 2]) << 8
                }
            }
            return true
        }

        /// An image (after its separator): one frame, with the graphic control before it; false
        /// when the data ends inside it. The first frame grows the canvas to cover it.
        private mutating func readImage(_ reader: inout ByteReader, limits: DecodeLimits) throws -> Bool {
            let descriptorOffset = reader.offset - 1
            guard let x = reader.u16le(), let y = reader.u16le(), let w = reader.u16le(),
                let h = reader.u16le(), let imageFlags = reader.u8()
            else { return false }
            if imageFlags & 0x80 != 0 {
                guard reader.skip(3 << (Int(imageFlags & 7) + 1)) else { return false }
            }
            guard reader.u8() != nil, GIFIndexer.readSubBlocks(&reader, keep: false) != nil else { return false }
            let rect = PixelRect(x: Int(x), y: Int(y), width: Int(w), height: Int(h))
            if frames.isEmpty {
                canvasWidth = max(canvasWidth, rect.maxX)
                canvasHeight = max(canvasHeight, rect.maxY)
                try Limits.checkCanvas(width: canvasWidth, height: canvasHeight, limits: limits)
            }
            try Limits.checkFrame(rect, limits: limits)
            let control = pendingControl ?? GraphicControl()
            pendingControl = nil
            frames.append(
                FrameDescriptor(
                    rect: rect, disposal: control.disposal, blend: .over,
                    rawDelayMs: control.delayCentiseconds * 10,
                    isOpaque: control.transparentIndex == nil,
                    source: .gif(
                        descriptorOffset: descriptorOffset, end: reader.offset,
                        transparentIndex: control.transparentIndex)))
            try Limits.checkFrameCount(frames.count, canvasPixels: canvasWidth * canvasHeight, limits: limits)
            return true
        }
    }

    /// Reads data sub-blocks up to and including the zero-length terminator and returns where
    /// their payloads lie. Returns nil when the data ends first. With `keep: false` the blocks
    /// are skipped and an empty list is returned.
    private static func readSubBlocks(_ reader: inout ByteReader, keep: Bool = true) -> [Range<Int>]? {
        var blocks: [Range<Int>] = []
        while true {
            guard let size = reader.u8() else { return nil }
            if size == 0 { return blocks }
            guard let block = reader.take(Int(size)) else { return nil }
            if keep { blocks.append(block) }
        }
    }

    private static func isLoopApplication(_ id: Slice<ImageBytes>) -> Bool {
        id.elementsEqual("NETSCAPE2.0".utf8) || id.elementsEqual("ANIMEXTS1.0".utf8)
    }
}

/// The fields of a GIF graphic control extension that decide how the next image is shown.
struct GraphicControl {
    var disposal: FrameDisposal = .none
    var delayCentiseconds = 0
    var transparentIndex: Int? = nil

    init() {}

    /// Reads the 4-byte block at `start` (the caller checked that it is there).
    init(_ bytes: ImageBytes, _ start: Int) {
        let flags = bytes[start]
        // 2 = restore to background; 3 and 4 (an old alias) = restore previous; others = none.
        switch (flags >> 2) & 7 {
        case 2: disposal = .background
        case 3, 4: disposal = .previous
        default: disposal = .none
        }
        delayCentiseconds = Int(bytes[start + 1]) | Int(bytes[start + 2]) << 8
        transparentIndex = flags & 1 != 0 ? Int(bytes[start + 3]) : nil
    }
}

/// What a GIF frame decoder needs from the file's header: where the header (signature, screen
/// descriptor and global colour table) ends, and where the global colour table lies.
struct GIFHeader: Sendable, Hashable {
    var headerEnd: Int
    var globalPalette: Range<Int>?
}
