import CWebP

/// Gives an animated WebP from `WebPAnimEncoder` back the frames it merged. The encoder folds a
/// frame identical to the one before it into that frame (one frame shown for both durations);
/// a preview must keep every frame with its own duration (the same frame count and delay table
/// as the original). Each merged frame comes back as a fully transparent frame over the merged
/// frame's rectangle, blended (so it changes nothing on screen) and shown for its own duration;
/// the merged frame's disposal moves to the last of them, so the canvas is disposed when the run
/// ends, as it was.
enum AnimatedWebPFrameSplitter {
    /// `webp` with one frame starting at each of `startsMs` (ascending, the first 0), the last
    /// ending at `endMs`, looping `loopCount` times (WebP's loop count: `WebPAnimEncoder` makes a
    /// still image of an animation merged into one frame, which has none). Returned unchanged
    /// when nothing was merged.
    static func restoreFrames(_ webp: [UInt8], startsMs: [Int], endMs: Int, loopCount: Int) throws -> [UInt8] {
        try webp.withUnsafeBufferPointer { buffer in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            guard let source = WebPMuxCreate(&data, 0) else {
                throw WebPEncodingError(message: "libwebpmux cannot read what WebPAnimEncoder made")
            }
            defer { WebPMuxDelete(source) }
            var animationFrames: Int32 = 0
            guard WebPMuxNumChunks(source, WEBP_CHUNK_ANMF, &animationFrames) == WEBP_MUX_OK else {
                throw WebPEncodingError(message: "libwebpmux cannot count the frames")
            }
            if Int(animationFrames) == startsMs.count { return webp }
            var canvasWidth: Int32 = 0
            var canvasHeight: Int32 = 0
            guard WebPMuxGetCanvasSize(source, &canvasWidth, &canvasHeight) == WEBP_MUX_OK else {
                throw WebPEncodingError(message: "libwebpmux cannot read the canvas size")
            }
            var parameters = WebPMuxAnimParams(bgcolor: 0, loop_count: Int32(clamping: loopCount))
            if animationFrames > 0 { _ = WebPMuxGetAnimationParams(source, &parameters) }
            return try rebuild(
                source, frames: max(1, Int(animationFrames)), still: animationFrames == 0, parameters: parameters,
                canvas: (canvasWidth, canvasHeight), startsMs: startsMs, endMs: endMs)
        }
    }

    private static func rebuild(
        _ source: OpaquePointer, frames: Int, still: Bool, parameters: WebPMuxAnimParams, canvas: (Int32, Int32),
        startsMs: [Int], endMs: Int
    ) throws -> [UInt8] {
        guard let target = WebPMuxNew() else { throw WebPEncodingError(message: "libwebpmux out of memory") }
        defer { WebPMuxDelete(target) }
        var parameters = parameters
        guard WebPMuxSetAnimationParams(target, &parameters) == WEBP_MUX_OK,
            WebPMuxSetCanvasSize(target, canvas.0, canvas.1) == WEBP_MUX_OK
        else { throw WebPEncodingError(message: "libwebpmux refused the animation's parameters") }
        var outputStart = 0
        var next = 0  // the first added frame not yet written
        for n in 1...frames {
            var frame = WebPMuxFrameInfo()
            guard WebPMuxGetFrame(source, UInt32(n), &frame) == WEBP_MUX_OK else {
                throw WebPEncodingError(message: "libwebpmux cannot read frame \(n)")
            }
            defer { WebPDataClear(&frame.bitstream) }
            if still {
                frame.duration = Int32(clamping: endMs)
                frame.dispose_method = WEBP_MUX_DISPOSE_NONE
                frame.blend_method = WEBP_MUX_NO_BLEND
            }
            let outputEnd = outputStart + Int(frame.duration)
            // The added frames this output frame stands for: those starting before it ends.
            var run: [Int] = []
            while next < startsMs.count && (startsMs[next] < outputEnd || n == frames) {
                run.append(next)
                next += 1
            }
            guard let first = run.first, startsMs[first] == outputStart else {
                throw WebPEncodingError(message: "WebPAnimEncoder's frame \(n) does not start where a frame was added")
            }
            let dispose = frame.dispose_method
            var width: Int32 = 0
            var height: Int32 = 0
            guard WebPGetInfo(frame.bitstream.bytes, frame.bitstream.size, &width, &height) != 0 else {
                throw WebPEncodingError(message: "WebPAnimEncoder's frame \(n) is not a WebP image")
            }
            for (position, added) in run.enumerated() {
                let end = added + 1 < startsMs.count ? startsMs[added + 1] : endMs
                var pushed = frame
                pushed.id = WEBP_CHUNK_ANMF
                pushed.duration = Int32(clamping: end - startsMs[added])
                pushed.dispose_method = position == run.count - 1 ? dispose : WEBP_MUX_DISPOSE_NONE
                if position == 0 {
                    try push(target, &pushed)
                } else {
                    let blank = try transparentImage(width: Int(width), height: Int(height))
                    try blank.withUnsafeBufferPointer { bytes in
                        pushed.bitstream = WebPData(bytes: bytes.baseAddress, size: bytes.count)
                        pushed.blend_method = WEBP_MUX_BLEND
                        try push(target, &pushed)
                    }
                }
            }
            outputStart = outputEnd
        }
        guard next == startsMs.count else {
            throw WebPEncodingError(message: "WebPAnimEncoder's frames do not cover every frame added")
        }
        var assembled = WebPData()
        WebPDataInit(&assembled)
        defer { WebPDataClear(&assembled) }
        guard WebPMuxAssemble(target, &assembled) == WEBP_MUX_OK, let bytes = assembled.bytes else {
            throw WebPEncodingError(message: "libwebpmux could not assemble the animation")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
    }

    private static func push(_ mux: OpaquePointer, _ frame: inout WebPMuxFrameInfo) throws {
        let status = WebPMuxPushFrame(mux, &frame, 1)
        guard status == WEBP_MUX_OK else {
            throw WebPEncodingError(message: "libwebpmux refused a frame (\(status.rawValue))")
        }
    }

    /// A lossless WebP of `width`×`height` fully transparent pixels (a few dozen bytes).
    private static func transparentImage(width: Int, height: Int) throws -> [UInt8] {
        let pixels = [UInt8](repeating: 0, count: width * height * 4)
        var output: UnsafeMutablePointer<UInt8>? = nil
        let size = pixels.withUnsafeBufferPointer {
            WebPEncodeLosslessRGBA($0.baseAddress, Int32(width), Int32(height), Int32(width * 4), &output)
        }
        guard size > 0, let output else { throw WebPEncodingError(message: "out of memory encoding a blank frame") }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
