import CWebP
import SystemResources

/// Encodes lossy animated WebP exactly as libwebp's `WebPAnimEncoder` does with `minimize_size`
/// (and `allow_mixed` when asked: lossless candidates too) — the same bytes; a test compares
/// them — with the frames' encodings spread over cores.
///
/// `WebPAnimEncoder` takes frames one after another: for each it encodes two candidates — the
/// rectangle that changed over the previous frame left in place, and over the previous frame
/// disposed to the background — keeps the smaller, and only then looks at the next frame. The
/// first candidate needs nothing but the two frames' pixels, so every frame's is encoded on a
/// worker as soon as the frame arrives; the second needs the rectangle chosen for the previous
/// frame, so it is encoded as soon as that choice is made. The choices are made in order, as
/// libwebp makes them, while the workers encode the next frames' first candidates: the second
/// candidates form the one chain that must wait, half the work. (Candidate rules:
/// ``AnimationCandidateGeometry``.)
///
/// Memory: the frames in flight (``framesInFlight``), each its canvas as ARGB words and its
/// candidates (two, or four with lossless ones); then the encoded frames. One encoder is used by one thread; it encodes on
/// threads of its own, one per core.
public final class ParallelAnimatedWebPEncoder: AnimationEncoding {
    public let width: Int
    public let height: Int
    private let loopCount: Int
    private let config: WebPConfig
    private let geometry: AnimationCandidateGeometry
    /// Frames kept (not merged into the one before), in order; `chosen` set for the first
    /// `decided` of them.
    private var frames: [KeptFrame] = []
    private var decided = 0
    /// Start of each added frame, in milliseconds; the next frame's start is `elapsedMs`.
    private var startsMs: [Int] = []
    private var elapsedMs = 0
    /// A canvas-sized buffer for the previous canvas with a rectangle disposed.
    private var disposed: [UInt32]
    /// Canvases no frame needs any more, to convert the next frames into (a canvas-sized
    /// allocation costs page faults in a service whose large allocations are mapped each time).
    private var spareCanvases: [[UInt32]] = []
    private var finished = false
    /// Whether each sub-frame is also tried lossless (libwebp's `allow_mixed`).
    public let allowMixed: Bool
    /// The first frame as added, until a second frame is kept (for ``singleFrame()``).
    private var firstFrame: Canvas?
    /// Where the candidates are encoded: threads of their own, one per core.
    private let workers = WorkerThreads(name: "webp-encode", limit: CPULimit.usableCores)

    private struct Candidate {
        var rect: PixelRect
        var blended: Bool
        /// libwebp's order of candidates (lossless in place, lossless over the disposed frame,
        /// lossy in place, lossy over the disposed frame): of two the same size, the first wins.
        var order: Int
        var encoded: DeferredWork<[UInt8]>
    }

    private struct KeptFrame {
        var startMs: Int
        /// Its canvas (ARGB), and the kept canvas before it (nil for the first frame); dropped
        /// once no choice needs them.
        var canvas: [UInt32]
        var previous: [UInt32]?
        /// Over the previous frame left in place (lossless, when tried, then lossy).
        var inPlace: [Candidate]
        /// Over the previous frame disposed to the background: made once the previous frame's
        /// choice is (never for the first frame).
        var overDisposed: [Candidate]?
        var chosen: Candidate?
        /// Set when the next frame's choice is made.
        var dispose = WEBP_MUX_DISPOSE_NONE
    }

    /// - Parameters:
    ///   - loopCount: WebP's loop count, the total number of plays (0 = forever).
    ///   - config: libwebp's lossy settings for every frame (a sub-frame blended over the canvas
    ///     is encoded with its loop filter off, as libwebp does).
    ///   - allowMixed: also try each sub-frame lossless (on its exact change rectangle, with
    ///     `config` made lossless), the smallest of all candidates kept, as `WebPAnimEncoder`
    ///     does with `allow_mixed` and `minimize_size`.
    public init(width: Int, height: Int, loopCount: Int, config: WebPConfig, allowMixed: Bool = false) throws {
        guard width > 0, height > 0, width <= Int(WEBP_MAX_DIMENSION), height <= Int(WEBP_MAX_DIMENSION) else {
            throw WebPEncodingError(message: "an animated WebP cannot be \(width)×\(height) pixels")
        }
        var config = config
        guard config.lossless == 0, WebPValidateConfig(&config) != 0 else {
            throw WebPEncodingError(message: "not a valid lossy configuration")
        }
        self.width = width
        self.height = height
        self.loopCount = max(0, min(loopCount, 65535))
        self.config = config
        self.allowMixed = allowMixed
        geometry = AnimationCandidateGeometry(width: width, height: height, quality: config.quality)
        disposed = [UInt32](repeating: 0, count: width * height)
    }

    deinit {
        for frame in frames[decided...] {
            for candidate in frame.inPlace + (frame.overDisposed ?? []) { candidate.encoded.cancelOrWait() }
        }
        workers.close()
    }

    /// Frames whose candidates may be encoding at once, before the oldest's choice is made.
    static let framesInFlight = 8

    /// The largest frame (in RGBA bytes) this encoder is meant for: 2 MiB, about 1024×512. Its
    /// frames in flight hold four times the memory `WebPAnimEncoder` holds, which for previews
    /// of that size is a few tens of megabytes; a larger preview is encoded frame after frame
    /// by `WebPAnimEncoder` itself (``AnimatedWebPEncoder``), which makes the same bytes.
    public static let largestFrameBytes = 2 << 20

    /// What the encoder may hold besides the encoded frames: the frames in flight (a canvas and
    /// two candidates each), the disposed canvas and the spare ones, and libwebp's work (8
    /// frames' worth, and 4 more per core for lossless candidates' encodings).
    public static func workingBytes(width: Int, height: Int) -> Int {
        (framesInFlight * 4 + 2 + 8 + 4 * CPULimit.usableCores) * width * height * 4
    }

    /// Frames added so far.
    public var frameCount: Int { startsMs.count }

    /// Adds the next frame, shown for `durationMs` milliseconds.
    public func add(_ frame: Canvas, durationMs: Int) throws {
        precondition(!finished, "frames added after finish()")
        guard frame.width == width, frame.height == height else {
            throw WebPEncodingError(message: "a \(frame.width)×\(frame.height) frame in a \(width)×\(height) animation")
        }
        var canvas = spareCanvases.popLast() ?? []
        AnimationCandidateGeometry.convert(frame, toARGB: &canvas)
        let start = elapsedMs
        startsMs.append(start)
        elapsedMs += max(1, durationMs)
        guard let last = frames.last else {
            // The first frame: what differs from a transparent canvas, never blended.
            let transparent = [UInt32](repeating: 0, count: width * height)
            let rects = canvas.withUnsafeBufferPointer { now in
                transparent.withUnsafeBufferPointer { geometry.changeRects(from: $0, to: now, emptyAllowed: false) }
            }
            firstFrame = frame
            let inPlace = candidates(canvas, rects, over: nil, disposedSide: false)
            frames.append(KeptFrame(startMs: start, canvas: canvas, previous: nil, inPlace: inPlace, overDisposed: nil))
            return
        }
        let previous = last.canvas
        let changed = canvas.withUnsafeBufferPointer { now in
            previous.withUnsafeBufferPointer { geometry.changeRects(from: $0, to: now, emptyAllowed: true) }
        }
        // Nothing changed (within the tolerance): libwebp merges the frame into the one before.
        guard !changed.lossy.isEmpty else {
            spareCanvases.append(canvas)
            return
        }
        firstFrame = nil
        let inPlace = candidates(canvas, changed, over: previous, disposedSide: false)
        frames.append(KeptFrame(startMs: start, canvas: canvas, previous: previous, inPlace: inPlace, overDisposed: nil))
        try decide(waiting: false)
        while frames.count - decided > Self.framesInFlight { try decide(waiting: true, once: true) }
    }

    /// The animated WebP of every frame added.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish() called twice")
        finished = true
        guard !frames.isEmpty else { throw WebPEncodingError(message: "an animation needs a frame") }
        try decide(waiting: true)
        if frames.count == 1 { return try singleFrame() }
        guard let mux = WebPMuxNew() else { throw WebPEncodingError(message: "libwebpmux out of memory") }
        defer { WebPMuxDelete(mux) }
        for (k, frame) in frames.enumerated() {
            guard let chosen = frame.chosen else { preconditionFailure("a frame left undecided") }
            let end = k + 1 < frames.count ? frames[k + 1].startMs : elapsedMs
            guard end - frame.startMs < 1 << 24 else {
                throw WebPEncodingError(message: "a frame shown for \(end - frame.startMs) ms, beyond WebP's limit")
            }
            let bitstream = try chosen.encoded.result()
            let status = bitstream.withUnsafeBufferPointer { bytes -> WebPMuxError in
                var info = WebPMuxFrameInfo()
                info.bitstream = WebPData(bytes: bytes.baseAddress, size: bytes.count)
                info.x_offset = Int32(chosen.rect.x)
                info.y_offset = Int32(chosen.rect.y)
                info.duration = Int32(end - frame.startMs)
                info.id = WEBP_CHUNK_ANMF
                info.dispose_method = frame.dispose
                info.blend_method = chosen.blended ? WEBP_MUX_BLEND : WEBP_MUX_NO_BLEND
                return WebPMuxPushFrame(mux, &info, 1)
            }
            guard status == WEBP_MUX_OK else { throw WebPEncodingError(message: "libwebpmux refused frame \(k)") }
        }
        var parameters = WebPMuxAnimParams(bgcolor: 0, loop_count: Int32(loopCount))
        var assembled = WebPData()
        WebPDataInit(&assembled)
        defer { WebPDataClear(&assembled) }
        guard WebPMuxSetCanvasSize(mux, Int32(width), Int32(height)) == WEBP_MUX_OK,
            WebPMuxSetAnimationParams(mux, &parameters) == WEBP_MUX_OK,
            WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK, let bytes = assembled.bytes
        else { throw WebPEncodingError(message: "libwebpmux could not assemble the animation") }
        let output = Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
        return try AnimatedWebPFrameSplitter.restoreFrames(output, startsMs: startsMs, endMs: elapsedMs, loopCount: loopCount)
    }

    /// Every frame after the first merged into it: libwebp then makes a still image of it when
    /// that is smaller, which its own encoder does (given the one frame, shown throughout).
    private func singleFrame() throws -> [UInt8] {
        let single = try AnimatedWebPEncoder(
            width: width, height: height, loopCount: loopCount, config: config, minimizeSize: true,
            allowMixed: allowMixed)
        try single.add(firstFrame!, durationMs: elapsedMs)
        return try AnimatedWebPFrameSplitter.restoreFrames(
            single.finish(), startsMs: startsMs, endMs: elapsedMs, loopCount: loopCount)
    }

    /// Makes the undecided frames' choices in order — the smaller candidate (the one in place
    /// when they are the same size), which sets the disposal of the frame before — starting each
    /// frame's second candidate once the frame before is decided. Stops at the first frame whose
    /// candidates are not encoded yet unless `waiting`, and after one frame when `once`.
    private func decide(waiting: Bool, once: Bool = false) throws {
        while decided < frames.count {
            let k = decided
            if k > 0 && frames[k].overDisposed == nil {
                let frame = frames[k]
                frames[k].overDisposed = candidates(
                    frame.canvas, over: frame.previous!, disposing: frames[k - 1].chosen!.rect)
            }
            let all = (frames[k].inPlace + (frames[k].overDisposed ?? [])).sorted { $0.order < $1.order }
            guard waiting || all.allSatisfy({ $0.encoded.isFinished }) else { return }
            var chosen = all[0]
            var chosenSize = try wait(for: chosen.encoded).count
            for candidate in all.dropFirst() {
                let size = try wait(for: candidate.encoded).count
                if size < chosenSize { (chosen, chosenSize) = (candidate, size) }
            }
            if k > 0 {
                let overDisposed = frames[k].overDisposed!.contains { $0.order == chosen.order }
                frames[k - 1].dispose = overDisposed ? WEBP_MUX_DISPOSE_BACKGROUND : WEBP_MUX_DISPOSE_NONE
            }
            frames[k].chosen = chosen
            frames[k].inPlace = []  // the other candidates' bytes go
            frames[k].overDisposed = nil
            frames[k].previous = nil
            if k > 0 {  // no choice needs the canvas before any more: its last reference is here
                spareCanvases.append(frames[k - 1].canvas)
                frames[k - 1].canvas = []
            }
            decided += 1
            if once { return }
        }
    }

    /// `work`'s result, encoding other frames' unstarted candidates here while it runs elsewhere.
    private func wait(for work: DeferredWork<[UInt8]>) throws -> [UInt8] {
        for frame in frames[decided...] {
            for candidate in frame.inPlace + (frame.overDisposed ?? []) where !work.isFinished {
                candidate.encoded.runIfUnstarted()
            }
        }
        return try work.result()
    }

    /// The candidates of `canvas` over `previous` disposed at `rect`.
    private func candidates(_ canvas: [UInt32], over previous: [UInt32], disposing rect: PixelRect) -> [Candidate] {
        disposed.withUnsafeMutableBufferPointer { target in
            previous.withUnsafeBufferPointer { target.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
        }
        AnimationCandidateGeometry.clearing(rect, in: &disposed, width: width)
        let changed = canvas.withUnsafeBufferPointer { now in
            disposed.withUnsafeBufferPointer { geometry.changeRects(from: $0, to: now, emptyAllowed: false) }
        }
        return candidates(canvas, changed, over: disposed, disposedSide: true)
    }

    /// The candidates of `canvas` over `previous` (nil for the first frame: never blended),
    /// each encoded on a worker: lossless on the exact change rectangle when tried, lossy on the
    /// lossy one.
    private func candidates(
        _ canvas: [UInt32], _ rects: (exact: PixelRect, lossy: PixelRect), over previous: [UInt32]?, disposedSide: Bool
    ) -> [Candidate] {
        var made: [Candidate] = []
        if allowMixed {
            made.append(candidate(canvas, rects.exact, over: previous, lossless: true, order: disposedSide ? 1 : 0))
        }
        made.append(candidate(canvas, rects.lossy, over: previous, lossless: false, order: disposedSide ? 3 : 2))
        return made
    }

    /// The candidate of `rect` of `canvas`, blended over `previous` when blending can show it
    /// (never for the first frame: nil).
    private func candidate(
        _ canvas: [UInt32], _ rect: PixelRect, over previous: [UInt32]?, lossless: Bool, order: Int
    ) -> Candidate {
        let (pixels, blended) = canvas.withUnsafeBufferPointer { now -> ([UInt32], Bool) in
            guard let previous else { return (geometry.subFrame(of: now, in: rect, blendedOver: nil), false) }
            return previous.withUnsafeBufferPointer { before in
                let blended = geometry.blendingPossible(over: before, now, in: rect, tolerant: !lossless)
                let canvas = blended ? before : nil
                let pixels =
                    lossless
                    ? geometry.exactSubFrame(of: now, in: rect, blendedOver: canvas)
                    : geometry.subFrame(of: now, in: rect, blendedOver: canvas)
                return (pixels, blended)
            }
        }
        var config = self.config
        if lossless {
            config.lossless = 1
        } else if blended {  // no loop filter across what shows through (libwebp's reason: blockiness)
            config.autofilter = 0
            config.filter_strength = 0
        }
        let frozen = config
        let work = DeferredWork { try Self.encode(pixels, width: rect.width, height: rect.height, config: frozen) }
        work.start(on: workers)
        return Candidate(rect: rect, blended: blended, order: order, encoded: work)
    }

    /// One sub-frame encoded by libwebp as a WebP image (the bitstream an animation frame holds).
    static func encode(_ pixels: [UInt32], width: Int, height: Int, config: WebPConfig) throws -> [UInt8] {
        var pixels = pixels
        var config = config
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebPEncodingError(message: "libwebp's picture did not initialise") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        picture.use_argb = 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        picture.argb_stride = Int32(width)
        let encoded = pixels.withUnsafeMutableBufferPointer { words in
            withUnsafeMutablePointer(to: &writer) { output in
                picture.argb = words.baseAddress
                picture.writer = WebPMemoryWrite
                picture.custom_ptr = UnsafeMutableRawPointer(output)
                defer {
                    picture.argb = nil  // ours, not libwebp's to free
                    WebPPictureFree(&picture)
                }
                return WebPEncode(&config, &picture)
            }
        }
        guard encoded != 0, let bytes = writer.mem else {
            throw WebPEncodingError(message: "libwebp could not encode a frame (error \(picture.error_code.rawValue))")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: writer.size))
    }
}
