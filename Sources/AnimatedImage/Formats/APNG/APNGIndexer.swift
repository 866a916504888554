/// Builds the ``ImageIndex`` of a PNG or APNG by walking its chunks once, without inflating
/// any image data.
///
/// The rules follow Chromium:
/// - `acTL` must come before the first `IDAT`; a later one, a second one, or one whose frame
///   count is 0 or above 2³¹ − 1 makes the file a still PNG (the extra `acTL` is ignored when
///   an earlier one was valid).
/// - `IDAT` is frame 0 only when an `fcTL` precedes it; otherwise it is the default image and
///   not part of the animation.
/// - `fcTL` and `fdAT` sequence numbers start at 0 and increase by one; the first break ends
///   the frame list (frames before it are kept, the image is marked truncated).
/// - An `fcTL` with no image data before the next `fcTL` is superseded by it.
/// - Frames beyond `acTL`'s frame count are ignored.
/// - The colour-space chunks before the image data (the first of each type) are kept for the
///   served frames (``ColorSpaceChunks``).
/// - CRCs (measured in Chromium 156): a mismatch in IHDR, PLTE or any IDAT rejects the file; an
///   `acTL` with a bad CRC is ignored (a still PNG), an `fcTL` with one ends the frame list;
///   `tRNS` and the colour chunks with bad CRCs are ignored; `fdAT` data is used whatever its CRC.
/// - A frame's image data is one run of data chunks (`IDAT` for frame 0 and the still image,
///   `fdAT` for the others); the first other chunk ends it, as soon as its 8-byte header is
///   in the file (its payload may be cut off or its CRC wrong). A file that ends right after a
///   frame's last data chunk, or inside the next chunk's header, does not show that frame.
/// - A data chunk after its run has ended (`fdAT` after a `tEXt` or an unknown chunk, whatever
///   its sequence number) ends the frame list; the frame before it stands on the data its run
///   had (measured in Chromium 156; an `IDAT` run split by another chunk leaves frame 0
///   incomplete, so the file shows nothing).
enum APNGIndexer {
    static func index(_ bytes: ImageBytes, limits: DecodeLimits) throws -> ImageIndex {
        var walker = PNGChunkWalker(bytes)
        let header = try readHeader(&walker, bytes: bytes, limits: limits)
        var scan = ChunkScan(bytes: bytes, header: header, animation: animationControl(bytes))
        while let chunk = walker.next() {
            guard try scan.take(chunk, from: walker, limits: limits) else { break }
        }
        return try scan.finish(walker, limits: limits)
    }

    /// The IHDR chunk, which must come first and whose CRC must match; the canvas it describes
    /// is checked against the limits.
    private static func readHeader(_ walker: inout PNGChunkWalker, bytes: ImageBytes, limits: DecodeLimits) throws
        -> PNGHeader
    {
        guard let first = walker.next(), first.type == PNGChunk.IHDR else {
            throw AnimatedImageError.malformed(.png, "the first chunk is not IHDR")
        }
        guard walker.crcMatches(first) else {
            throw AnimatedImageError.malformed(.png, "the IHDR chunk's CRC does not match")
        }
        let header = try PNGHeader(bytes: bytes, ihdr: first.data)
        try Limits.checkCanvas(width: header.width, height: header.height, limits: limits)
        return header
    }

    /// The chunks after IHDR, taken one at a time in file order (the rules above), and the index
    /// they make once the walk stops.
    private struct ChunkScan {
        let bytes: ImageBytes
        var header: PNGHeader
        let animation: (frames: Int, plays: Int)?
        var format: ImageFormat { animation == nil ? .png : .apng }
        var seenImageData = false
        var defaultImage: [Range<Int>] = []
        var builder: FrameListBuilder
        var stoppedEarly = false
        var colorSpace = ColorSpaceChunks()
        /// The last complete chunk held image data, and nothing complete has come after it yet.
        var dataIsLast = false
        /// Another chunk came after the current frame's (or the still image's) data run.
        var runEnded = false
        var sawEnd = false

        init(bytes: ImageBytes, header: PNGHeader, animation: (frames: Int, plays: Int)?) {
            self.bytes = bytes
            self.header = header
            self.animation = animation
            builder = FrameListBuilder(canvas: PixelRect(x: 0, y: 0, width: header.width, height: header.height))
        }

        /// Takes the next chunk; false when the walk stops here.
        mutating func take(_ chunk: PNGChunk, from walker: PNGChunkWalker, limits: DecodeLimits) throws -> Bool {
            if dataIsLast && chunk.type != PNGChunk.IDAT && chunk.type != PNGChunk.fdAT { runEnded = true }
            dataIsLast = false
            switch chunk.type {
            case PNGChunk.PLTE where !seenImageData:
                guard walker.crcMatches(chunk) else {
                    throw AnimatedImageError.malformed(.png, "the PLTE chunk's CRC does not match")
                }
                header.palette = chunk.data
            case PNGChunk.tRNS where !seenImageData:
                if walker.crcMatches(chunk) { header.transparency = chunk.data }
            case let type where !seenImageData && PNGChunk.colorSpaceTypes[type] != nil:
                if walker.crcMatches(chunk) {
                    colorSpace.add(PNGChunk.colorSpaceTypes[type]!, bytes.withUnsafeBufferPointer(of: chunk.data) { Array($0) })
                }
            case PNGChunk.IDAT:
                guard try takeImageData(chunk, from: walker) else { return false }
            case PNGChunk.fcTL where animation != nil:
                guard try takeFrameControl(chunk, from: walker, limits: limits) else { return false }
            case PNGChunk.fdAT where animation != nil:
                guard takeFrameData(chunk) else { return false }
            case PNGChunk.IEND:
                sawEnd = true
                return false
            default:
                return true
            }
            if let animation, builder.frames.count > animation.frames { return false }
            return true
        }

        /// An `IDAT` chunk: frame 0's data when an `fcTL` came first, else the default image's.
        private mutating func takeImageData(_ chunk: PNGChunk, from walker: PNGChunkWalker) throws -> Bool {
            guard walker.crcMatches(chunk) else {
                throw AnimatedImageError.noCompleteFrame(format, "an IDAT chunk's CRC does not match its data")
            }
            if runEnded && (animation == nil || builder.acceptsDefaultImageData) {
                // The image data was interrupted: what came before the interruption is all
                // of it (frame 0 or the still image; decoding tells whether it is whole).
                builder.finishPendingFrame()
                stoppedEarly = true
                return false
            }
            dataIsLast = true
            seenImageData = true
            if animation != nil, builder.acceptsDefaultImageData {
                builder.appendData(chunk.data)
            } else {
                defaultImage.append(chunk.data)
            }
            return true
        }

        /// An `fcTL` chunk: the next frame's control (the frame before it is finished).
        private mutating func takeFrameControl(_ chunk: PNGChunk, from walker: PNGChunkWalker, limits: DecodeLimits)
            throws -> Bool
        {
            guard walker.crcMatches(chunk) else {
                // A complete chunk follows the pending frame's data: that frame stands.
                builder.finishPendingFrame()
                stoppedEarly = true
                return false
            }
            runEnded = false
            do {
                try builder.control(bytes, chunk.data, limits: limits)
            } catch let error as AnimatedImageError {
                if builder.frames.isEmpty, case .limitExceeded = error { throw error }
                stoppedEarly = true
                return false
            }
            return true
        }

        /// An `fdAT` chunk: more of the pending frame's data, in sequence.
        private mutating func takeFrameData(_ chunk: PNGChunk) -> Bool {
            if runEnded {
                // The frame's data run ended at another chunk: the frame stands on it.
                builder.finishPendingFrame()
                stoppedEarly = true
                return false
            }
            guard builder.appendSequencedData(chunk.data, bytes: bytes) else {
                stoppedEarly = true
                return false
            }
            dataIsLast = true
            return true
        }

        /// The index of what the walk found, which stopped where `walker` is.
        mutating func finish(_ walker: PNGChunkWalker, limits: DecodeLimits) throws -> ImageIndex {
            guard seenImageData else {
                throw AnimatedImageError.malformed(.png, "no IDAT chunk")
            }
            // The file ends right after image data, or inside the header of the chunk after it: that
            // data may go on. A cut chunk whose header names another type ends the data run.
            let nextIsOther = walker.cutShortType.map { $0 != PNGChunk.IDAT && $0 != PNGChunk.fdAT } ?? false
            let lastDataUnfinished = dataIsLast && !sawEnd && !nextIsOther
            if header.colorType == 3 && header.palette == nil {
                throw AnimatedImageError.malformed(.png, "a palette image without a PLTE chunk")
            }
            if let animation {
                return try animatedIndex(
                    animation, lastDataUnfinished: lastDataUnfinished, cutShort: walker.isCutShort, limits: limits)
            }
            // A still PNG: its IDAT image is the one frame.
            if lastDataUnfinished {
                throw AnimatedImageError.noCompleteFrame(.png, "the file ends after the image data, before another chunk")
            }
            let still = FrameDescriptor(
                rect: PixelRect(x: 0, y: 0, width: header.width, height: header.height),
                disposal: .none, blend: .source, rawDelayMs: 0,
                isOpaque: header.isOpaque, source: .png(dataRanges: defaultImage))
            return ImageIndex(
                format: .png, canvasWidth: header.width, canvasHeight: header.height,
                frames: [still], playCount: 1, truncated: walker.isCutShort || stoppedEarly,
                colorSpace: colorSpace, header: .png(header))
        }

        /// The index of an APNG: the frames collected, at most as many as `acTL` says.
        private mutating func animatedIndex(
            _ animation: (frames: Int, plays: Int), lastDataUnfinished: Bool, cutShort: Bool, limits: DecodeLimits
        ) throws -> ImageIndex {
            var frames = builder.finish(complete: !stoppedEarly && !lastDataUnfinished)
            // tRNS may come after the fcTL chunks; opacity is known only now.
            for i in frames.indices { frames[i].isOpaque = header.isOpaque }
            let truncated = stoppedEarly || lastDataUnfinished || cutShort || frames.count < animation.frames
            if frames.count > animation.frames { frames.removeSubrange(animation.frames...) }
            if frames.isEmpty {
                throw AnimatedImageError.noCompleteFrame(
                    .apng,
                    stoppedEarly
                        ? "the frame control chunks are out of sequence" : "no frame has image data")
            }
            try Limits.checkFrameCount(frames.count, canvasPixels: header.width * header.height, limits: limits)
            return ImageIndex(
                format: .apng, canvasWidth: header.width, canvasHeight: header.height,
                frames: frames, playCount: animation.plays, truncated: truncated,
                colorSpace: colorSpace, header: .png(header))
        }
    }
}

extension APNGIndexer {
    /// The first `acTL` before the first `IDAT` with a matching CRC, if it is valid: frame count
    /// 1...2³¹ − 1.
    /// Later `acTL` chunks are ignored; an invalid first one makes the file a still PNG.
    static func animationControl(_ bytes: ImageBytes) -> (frames: Int, plays: Int)? {
        let walker = PNGChunkWalker(bytes)
        for chunk in walker {
            if chunk.type == PNGChunk.IDAT { return nil }
            // An acTL whose CRC does not match is skipped, as if absent.
            guard chunk.type == PNGChunk.acTL, walker.crcMatches(chunk) else { continue }
            var reader = ByteReader(bytes, range: chunk.data)
            guard let frames = reader.u32be(), let plays = reader.u32be(), frames > 0, frames <= Int32.max else {
                return nil
            }
            return (Int(frames), Int(plays))
        }
        return nil
    }
}

/// Collects APNG frames from `fcTL`, `IDAT` and `fdAT` chunks in file order, checking sequence
/// numbers and frame rectangles.
private struct FrameListBuilder {
    let canvas: PixelRect
    private(set) var frames: [FrameDescriptor] = []
    private var pending: FrameDescriptor? = nil
    private var pendingData: [Range<Int>] = []
    private var nextSequence: UInt32 = 0

    init(canvas: PixelRect) {
        self.canvas = canvas
    }

    /// IDAT data belongs to frame 0 when an fcTL came before it and no frame was finished yet.
    var acceptsDefaultImageData: Bool { pending != nil && frames.isEmpty }

    mutating func appendData(_ range: Range<Int>) {
        pendingData.append(range)
    }

    /// Reads the fcTL whose payload lies at `data`. The frame before it is finished first (when
    /// it has data): its data is complete whatever this chunk turns out to be.
    mutating func control(_ bytes: ImageBytes, _ data: Range<Int>, limits: DecodeLimits) throws {
        finishPending()
        var reader = ByteReader(bytes, range: data)
        guard let sequence = reader.u32be(), let w = reader.u32be(), let h = reader.u32be(),
            let x = reader.u32be(), let y = reader.u32be(), let num = reader.u16be(),
            let den = reader.u16be(), let dispose = reader.u8(), let blend = reader.u8()
        else {
            throw AnimatedImageError.malformed(.apng, "fcTL is shorter than 26 bytes")
        }
        guard sequence == nextSequence else {
            throw AnimatedImageError.malformed(.apng, "fcTL sequence number \(sequence), expected \(nextSequence)")
        }
        nextSequence += 1
        let rect = PixelRect(x: Int(x), y: Int(y), width: Int(w), height: Int(h))
        guard w > 0, h > 0, canvas.contains(rect), dispose <= 2, blend <= 1 else {
            throw AnimatedImageError.malformed(.apng, "fcTL \(sequence) describes an invalid frame")
        }
        try Limits.checkFrame(rect, limits: limits)
        // delay_num / delay_den seconds in whole milliseconds by integer division, as Chromium
        // counts them (1/15 s is 66 ms, not 67); a denominator of 0 means 100.
        let denominator = den == 0 ? 100 : Int(den)
        let milliseconds = Int(num) * 1000 / denominator
        pending = FrameDescriptor(
            rect: rect,
            disposal: dispose == 0 ? .none : dispose == 1 ? .background : .previous,
            blend: blend == 0 ? .source : .over,
            rawDelayMs: milliseconds, isOpaque: false, source: .png(dataRanges: []))
        pendingData = []
    }

    /// Adds an fdAT payload (minus its sequence number) to the pending frame. False on a
    /// sequence break or when no fcTL came first.
    mutating func appendSequencedData(_ range: Range<Int>, bytes: ImageBytes) -> Bool {
        guard pending != nil, range.count >= 4 else { return false }
        var reader = ByteReader(bytes, offset: range.lowerBound)
        guard let sequence = reader.u32be(), sequence == nextSequence else { return false }
        nextSequence += 1
        pendingData.append(range.lowerBound + 4..<range.upperBound)
        return true
    }

    /// Ends the pending frame (when it has data) without reading another fcTL.
    mutating func finishPendingFrame() {
        finishPending()
    }

    private mutating func finishPending() {
        guard var frame = pending else { return }
        pending = nil
        // An fcTL without any image data is superseded by the next one.
        guard !pendingData.isEmpty else { return }
        frame.source = .png(dataRanges: pendingData)
        frames.append(frame)
        pendingData = []
    }

    /// The frames collected; the pending one is kept only when the chunk stream did not break.
    mutating func finish(complete: Bool) -> [FrameDescriptor] {
        if complete { finishPending() }
        return frames
    }
}
