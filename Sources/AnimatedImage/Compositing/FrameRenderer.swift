/// Renders any frame of an animation, fast in the two ways clients ask: in order (each frame
/// decoded once) and at random (never replaying from frame 0 when it need not).
///
/// For frame k it starts from the cheapest of: the frames it has just drawn (when k is ahead of
/// them), the nearest canvas checkpoint at or before k, or the nearest frame that can be drawn on
/// a blank canvas (``FrameDependencies``). While replaying it keeps a checkpoint every
/// `checkpointInterval` frames, so once a stretch has been played, any frame in it costs at
/// most `checkpointInterval` frame decodes.
///
/// A renderer holds mutable state and is used by one thread at a time; make one per image per
/// decoding queue. Its checkpoints are counted in ``checkpointBytes`` for the owner's budget.
public final class FrameRenderer {
    public let image: AnimatedImage
    public let checkpointInterval: Int
    /// Checkpoints are not kept beyond this many bytes.
    public var checkpointBudget: Int

    private let decoder: any FrameDecoder
    private var compositor: Compositor
    /// The index of the frame the compositor's canvas shows, or -1 before the first draw.
    private var drawn = -1
    /// Compositors ready for frame n to be drawn (their canvas, and what the disposal before n
    /// cleared), keyed by n.
    private var checkpoints: [Int: Compositor] = [:]
    /// Frames 0...verifiedThrough are known to decode.
    private var verifiedThrough: Int

    /// The frame whose canvas the last ``render(_:)`` returned, while the compositor still
    /// shows it (drawing from it since); nil after a ``resume(after:output:)`` or a failed render.
    private var returned: Int?

    /// The part of the canvas the last ``render(_:)`` returned that may differ from the canvas
    /// the call before it returned (every pixel outside it is the same); nil when not known —
    /// the first call, a frame drawn afresh from a checkpoint or a key frame, a resume. Lets a
    /// caller that scaled the previous canvas scale only what changed
    /// (``Resampler/affected(by:sourceWidth:sourceHeight:width:height:)``).
    public private(set) var changedByLastRender: PixelRect?

    /// How many frames this renderer has decoded (for tests and metrics).
    public private(set) var decodeCount = 0

    /// When one ``render(_:)`` call replays several frames (a cold start far into an animation),
    /// decode them on background threads (one per core, up to 4; frames' data decode
    /// independently) while this thread composites them in order. Results,
    /// errors and ``decodeCount`` are those of decoding in line. Off by default: a renderer
    /// driven by a pool of decoding threads should not start more threads.
    public var backgroundDecoding = false

    public init(image: AnimatedImage, checkpointInterval: Int = 16, checkpointBudget: Int = 256 << 20) {
        self.image = image
        self.checkpointInterval = max(1, checkpointInterval)
        self.checkpointBudget = checkpointBudget
        self.decoder = image.makeDecoder()
        self.compositor = Compositor(width: image.index.canvasWidth, height: image.index.canvasHeight)
        self.verifiedThrough = image.isVerified ? image.frameCount - 1 : -1
    }

    /// Bytes held by checkpoints.
    public var checkpointBytes: Int { checkpoints.count * image.index.bytesPerFrame }

    /// Frames that currently have a checkpoint before them.
    public var checkpointIndices: [Int] { checkpoints.keys.sorted() }

    /// Forgets every checkpoint (memory pressure); rendering stays correct, just slower.
    public func discardCheckpoints() {
        checkpoints.removeAll()
    }

    /// How many frames ``render(_:)`` would decode to reach frame `index` from what this
    /// renderer holds now (the frame it last drew, its checkpoints, the nearest key frame).
    public func framesToDecode(for index: Int) -> Int {
        guard index >= 0, index < image.frameCount, index != drawn else { return 0 }
        let start = chooseStart(for: index)
        return index - start.frame + 1 + max(0, start.frame - verifiedThrough - 1)
    }

    /// True when frame `frame`'s composited output is all ``resume(after:output:)`` needs: its
    /// disposal does not put back what lay beneath it.
    public func canResume(after frame: Int) -> Bool {
        frame >= 0 && frame < image.frameCount && image.index.frames[frame].disposal != .previous
    }

    /// Continues from frame `frame`'s composited output — a frame served earlier, e.g. decoded
    /// back from its PNG — instead of replaying the frames up to it. Every frame's output is
    /// exact (lossless PNG), so what follows is rendered exactly as by replaying.
    public func resume(after frame: Int, output: Canvas) {
        precondition(canResume(after: frame), "frame \(frame) cannot be resumed from")
        precondition(
            output.width == image.canvasWidth && output.height == image.canvasHeight,
            "a \(output.width)×\(output.height) output for a \(image.canvasWidth)×\(image.canvasHeight) canvas")
        compositor = Compositor(output: output, of: image.index.frames[frame])
        drawn = frame
        returned = nil
        // The output exists, so every frame up to it decoded when it was first rendered.
        verifiedThrough = max(verifiedThrough, frame)
    }

    /// ``resume(after:output:)`` from the PNG that ``PNGEncoder`` made of frame `frame`.
    public func resume(after frame: Int, png: [UInt8]) throws {
        let pixels = try APNGFrameDecoder.decodeRGBA(png, width: image.canvasWidth, height: image.canvasHeight)
        resume(after: frame, output: Canvas(width: image.canvasWidth, height: image.canvasHeight, pixels: pixels))
    }

    /// The composited canvas of frame `index`.
    ///
    /// When the image was not verified up front, every frame before `index` is decoded (not
    /// composited) once to make sure it is whole, as a browser would have to: a frame after a
    /// broken one is never shown.
    public func render(_ index: Int) throws -> Canvas {
        let frames = image.index.frames
        guard index >= 0, index < frames.count else {
            throw AnimatedImageError.frameOutOfRange(index: index, frameCount: frames.count)
        }
        // Whether the compositor still holds the canvas returned last, changes since recorded.
        let continuing = returned == drawn
        returned = nil
        changedByLastRender = nil
        if index == drawn {
            if continuing { changedByLastRender = PixelRect(x: 0, y: 0, width: 0, height: 0) }
            returned = index
            return compositor.canvas
        }

        let start = chooseStart(for: index)
        if start.fresh {
            compositor = start.checkpoint ?? Compositor(width: image.index.canvasWidth, height: image.index.canvasHeight)
        }
        if !continuing || start.fresh { compositor.forgetChanges() }
        try verifyFrames(before: start.frame)
        let dependencies = image.dependencies
        let ahead =
            backgroundDecoding && index - start.frame >= 3
            ? DecodeAhead(decoder: decoder, frames: frames, range: start.frame...index) : nil
        defer { ahead?.cancel() }
        for i in start.frame...index {
            if i > 0, i % checkpointInterval == 0, !dependencies.replayStart[i], checkpoints[i] == nil,
                checkpointBytes + image.index.bytesPerFrame <= checkpointBudget
            {
                _ = compositor.canvasBeforeNextFrame()
                checkpoints[i] = compositor
            }
            let patch = try ahead.map { try accept($0.next(), i) } ?? decode(i)
            compositor.draw(patch, as: frames[i], startsClean: image.dependencies.startsClean[i])
            drawn = i
        }
        if continuing && !start.fresh { changedByLastRender = compositor.changed }
        compositor.forgetChanges()
        returned = index
        return compositor.canvas
    }

    private struct Start {
        var frame: Int
        var fresh: Bool
        var checkpoint: Compositor?
    }

    private func chooseStart(for index: Int) -> Start {
        let key = image.dependencies.replayStart(atOrBefore: index)
        var best = Start(frame: key, fresh: true, checkpoint: nil)
        if let checkpoint = checkpoints.keys.filter({ $0 <= index && $0 > best.frame }).max() {
            best = Start(frame: checkpoint, fresh: true, checkpoint: checkpoints[checkpoint])
        }
        if drawn >= 0, drawn < index, drawn + 1 >= best.frame {  // as cheap, and no fresh canvas
            best = Start(frame: drawn + 1, fresh: false, checkpoint: nil)
        }
        return best
    }

    private func verifyFrames(before limit: Int) throws {
        guard verifiedThrough + 1 < limit else { return }
        for i in (verifiedThrough + 1)..<limit {
            _ = try decode(i)
        }
    }

    private func decode(_ i: Int) throws -> FramePatch {
        try accept(Result { try decoder.decode(image.index.frames[i]) }, i)
    }

    /// Counts a decode of frame `i` and turns its data error into the renderer's error.
    private func accept(_ result: Result<FramePatch, any Error>, _ i: Int) throws -> FramePatch {
        decodeCount += 1
        do {
            let patch = try result.get()
            verifiedThrough = max(verifiedThrough, i)
            return patch
        } catch let error as FrameDataError {
            throw AnimatedImageError.frameDecodeFailed(index: i, error.reason)
        }
    }
}
