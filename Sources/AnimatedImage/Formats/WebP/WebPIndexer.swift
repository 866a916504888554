import CWebP

/// Builds the ``ImageIndex`` of a WebP file (still or animated) with libwebpdemux, which
/// parses the RIFF container without decoding a bitstream.
///
/// A file whose RIFF data is cut short is rejected outright, whatever frames it holds complete:
/// Chromium shows no frame of such a file (unlike a cut GIF or APNG). The ANIM background colour
/// is not recorded: browsers ignore it. The ICC profile of a still WebP (its `ICCP` chunk, when
/// the VP8X flags say there is one) is kept for the served frame as PNG `iCCP`; an animated
/// WebP's is not, because Chromium does not apply it (measured in Chromium 156: its frames
/// show unconverted, in ImageDecoder and in <img> alike).
enum WebPIndexer {
    static func index(_ bytes: ImageBytes, limits: DecodeLimits) throws -> ImageIndex {
        try bytes.withUnsafeBufferPointer { buffer -> ImageIndex in
            guard let base = buffer.baseAddress else { throw AnimatedImageError.unsupportedFormat }
            var data = WebPData(bytes: base, size: buffer.count)
            var state = WEBP_DEMUX_PARSING_HEADER
            let demuxer = WebPDemuxPartial(&data, &state)
            defer { WebPDemuxDelete(demuxer) }
            if state == WEBP_DEMUX_PARSING_HEADER || state == WEBP_DEMUX_PARSED_HEADER {
                throw AnimatedImageError.malformed(
                    .webp, "the file ends before the \(Self.riffLength(buffer)) bytes its RIFF header announces")
            }
            guard let demux = demuxer, state == WEBP_DEMUX_DONE else {
                throw AnimatedImageError.malformed(.webp, "the RIFF container could not be parsed")
            }
            let width = Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH))
            let height = Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT))
            let flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS)
            guard width > 0, height > 0 else {
                throw AnimatedImageError.malformed(.webp, "the canvas is \(width)×\(height)")
            }
            try Limits.checkCanvas(width: width, height: height, limits: limits)
            let animated = flags & UInt32(ANIMATION_FLAG.rawValue) != 0
            let canvas = PixelRect(x: 0, y: 0, width: width, height: height)

            var frames: [FrameDescriptor] = []
            var iterator = WebPIterator()
            var damaged = false
            if WebPDemuxGetFrame(demux, 1, &iterator) != 0 {
                defer { WebPDemuxReleaseIterator(&iterator) }
                repeat {
                    guard iterator.complete != 0, let fragment = iterator.fragment.bytes else {
                        damaged = true
                        break
                    }
                    let rect = PixelRect(
                        x: Int(iterator.x_offset), y: Int(iterator.y_offset),
                        width: Int(iterator.width), height: Int(iterator.height))
                    guard canvas.contains(rect), !rect.isEmpty else { damaged = true; break }
                    try Limits.checkFrame(rect, limits: limits)
                    let start = fragment - base
                    let frame = FrameDescriptor(
                        rect: rect,
                        disposal: iterator.dispose_method == WEBP_MUX_DISPOSE_BACKGROUND ? .background : .none,
                        blend: iterator.blend_method == WEBP_MUX_BLEND ? .over : .source,
                        rawDelayMs: animated ? Int(iterator.duration) : 0,
                        isOpaque: iterator.has_alpha == 0,
                        source: .webp(
                            range: start..<start + iterator.fragment.size,
                            hasAlpha: iterator.has_alpha != 0))
                    frames.append(frame)
                    try Limits.checkFrameCount(frames.count, canvasPixels: width * height, limits: limits)
                } while WebPDemuxNextFrame(&iterator) != 0
            }
            guard !frames.isEmpty else {
                throw AnimatedImageError.noCompleteFrame(.webp, "no frame is complete")
            }
            let loops = animated ? Int(WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT)) : 1
            var colorSpace = ColorSpaceChunks.none
            var chunk = WebPChunkIterator()
            // Chromium reads the profile of a still WebP only: with the animation flag set it
            // clears the ICC flag and shows the frames unconverted, so they are served so too.
            if !animated, flags & UInt32(ICCP_FLAG.rawValue) != 0, WebPDemuxGetChunk(demux, "ICCP", 1, &chunk) != 0 {
                defer { WebPDemuxReleaseChunkIterator(&chunk) }
                if let profile = chunk.chunk.bytes, chunk.chunk.size > 0 {
                    colorSpace = try ColorSpaceChunks.iccProfile(UnsafeRawBufferPointer(start: profile, count: chunk.chunk.size))
                }
            }
            return ImageIndex(
                format: .webp, canvasWidth: width, canvasHeight: height, frames: frames,
                playCount: loops, truncated: damaged, colorSpace: colorSpace,
                header: .webp(animated: animated))
        }
    }

    /// The file length the RIFF header announces (8 + its size field, padded to even).
    static func riffLength(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
        guard buffer.count >= 8 else { return 0 }
        let size = Int(buffer[4]) | Int(buffer[5]) << 8 | Int(buffer[6]) << 16 | Int(buffer[7]) << 24
        return 8 + size + (size & 1)
    }
}
