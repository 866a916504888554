import Dispatch
import Synchronization

/// The rendition frames of a list of frame indices, in order, for the products made of a whole
/// animation (previews, storyboards): frames are rendered in order on the calling thread (a
/// renderer composites one frame on the last) and each is scaled on another thread, up to
/// ``framesAhead(_:)`` frames ahead of the one handed back, so scaling — most of the work —
/// uses every core while the caller encodes or draws in order. While the frame the caller needs
/// is being scaled, the caller scales the ones after it that no thread has started (rendering
/// a 1280×720 GIF frame costs less than scaling it: waiting instead left one of two cores idle
/// a third of the time).
///
/// For canvases above 64 MB (``framesAhead(_:)`` 0) nothing is copied or scaled ahead: each frame
/// is scaled on the calling thread, from the renderer's own canvas, before the next is rendered.
final class ScaledFrameStream {
    private let rendition: FrameRendition
    private let renderer: FrameRenderer
    private let cachedFrame: (Int) -> Canvas?
    private let indices: [Int]
    private let ahead: Int
    /// Indices started (rendered, scaling or scaled), and the frames started but not handed back.
    private var started = 0
    private var pending: [(index: Int, scaling: FrameScaling)] = []
    private let spares = SpareCanvases()

    /// A stream of `indices`' frames of `image` in `rendition`: `cachedFrame` gives a frame's
    /// rendition pixels when they are at hand already (a frame cache), else nil; the others are
    /// rendered by `renderer` and scaled, up to `ahead` frames ahead (nil: ``framesAhead(_:)``).
    init(
        _ image: AnimatedImage, rendition: FrameRendition, indices: [Int], renderer: FrameRenderer,
        ahead: Int? = nil, cachedFrame: @escaping (Int) -> Canvas?
    ) {
        self.rendition = rendition
        self.renderer = renderer
        self.cachedFrame = cachedFrame
        self.indices = indices
        self.ahead = ahead ?? Self.framesAhead(image)
    }

    deinit {
        for frame in pending { frame.scaling.cancelOrWait() }  // no work left behind
    }

    /// The next index's frame, or nil after the last.
    func next() throws -> (index: Int, frame: Canvas)? {
        while started < indices.count && pending.count <= ahead { start(indices[started]) }
        guard !pending.isEmpty else { return nil }
        // While another thread scales the first frame, scale the next ones not yet started here.
        for other in pending.dropFirst() where !pending[0].scaling.isFinished { other.scaling.runIfUnstarted() }
        let first = pending.removeFirst()
        return (first.index, try first.scaling.result())
    }

    /// Starts `index`'s frame. A frame that does not render ends the stream there: its error is
    /// handed back in its turn, after the frames before it.
    private func start(_ index: Int) {
        started += 1
        if let cached = cachedFrame(index) {
            pending.append((index, FrameScaling(finished: .success(cached))))
            return
        }
        let rendered: Canvas
        do {
            rendered = try renderer.render(index)
        } catch {
            pending.append((index, FrameScaling(finished: .failure(error))))
            started = indices.count
            return
        }
        if ahead == 0 {  // scaled by next(), before the renderer draws again
            pending.append((index, FrameScaling(rendered, as: rendition, spares: nil)))
            return
        }
        let scaling = FrameScaling(spares.copy(of: rendered), as: rendition, spares: spares)
        DispatchQueue.global().async { scaling.runIfUnstarted() }
        pending.append((index, scaling))
    }

    /// Frames scaled ahead of the one handed back: 4, or none (each frame scaled before the next
    /// is rendered) for canvases above 64 MB, so the canvases waiting to be scaled stay a few.
    static func framesAhead(_ image: AnimatedImage) -> Int {
        image.decodeMemory.canvasBytes > 64 << 20 ? 0 : 4
    }

    /// What the frames started and not handed back may hold besides the renderer's canvas and
    /// one scaling: up to ``framesAhead(_:)`` + 1 of them (each a copy of the canvas, the
    /// scaler's work and the scaled frame, all scaling at once at worst); nothing when none are
    /// scaled ahead.
    static func aheadBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let ahead = framesAhead(image)
        guard ahead > 0 else { return 0 }
        let output = rendition.outputWidth * rendition.outputHeight * 4
        let scaling = RenditionEncoder.workingBytes(rendition, width: image.canvasWidth, height: image.canvasHeight)
        return (ahead + 1) * (image.decodeMemory.canvasBytes + scaling + output)
    }
}

/// Canvases a scaled frame is done with, to copy the next rendered frames into. A rendered
/// canvas shares its storage with the renderer's, which the next frame's compositing would then
/// copy into new memory: in the service, whose canvas-sized allocations are mapped on their own
/// (``ReleasedMemory/configureProcessAllocator()``), that cost a storyboard a third of its time
/// in page faults. Copied here into a canvas already mapped, it leaves the renderer's unshared.
private final class SpareCanvases: Sendable {
    private let canvases = Mutex<[Canvas]>([])

    /// `canvas`'s pixels in a canvas of their own (a spare one when there is one).
    func copy(of canvas: Canvas) -> Canvas {
        var copy = canvases.withLock { $0.popLast() } ?? Canvas(width: canvas.width, height: canvas.height)
        if copy.width != canvas.width || copy.height != canvas.height {
            copy = Canvas(width: canvas.width, height: canvas.height)
        }
        copy.pixels.withUnsafeMutableBufferPointer { target in
            canvas.pixels.withUnsafeBufferPointer { target.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
        }
        return copy
    }

    /// Keeps `canvas` for a later copy.
    func keep(_ canvas: Canvas) {
        canvases.withLock { $0.append(canvas) }
    }
}

/// One frame's scaling, run once by whichever thread comes first: a worker, or the caller
/// when it needs the frame (``result()``).
private final class FrameScaling: Sendable {
    private enum State {
        case unstarted(Canvas, FrameRendition)
        case running
        case finished(Result<Canvas, any Error>)
    }

    private let state: Mutex<State>
    /// Left when the scaling finishes (entered at creation unless already finished).
    private let finished = DispatchGroup()
    /// Where the canvas goes once scaled (nil: it is the renderer's).
    private let spares: SpareCanvases?

    init(_ canvas: Canvas, as rendition: FrameRendition, spares: SpareCanvases?) {
        state = Mutex(.unstarted(canvas, rendition))
        self.spares = spares
        finished.enter()
    }

    init(finished result: Result<Canvas, any Error>) {
        state = Mutex(.finished(result))
        spares = nil
    }

    /// True once the frame is scaled (or failed to be).
    var isFinished: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// Scales the frame here unless another thread has started it.
    func runIfUnstarted() {
        let work: (Canvas, FrameRendition)? = state.withLock { state in
            guard case .unstarted(let canvas, let rendition) = state else { return nil }
            state = .running
            return (canvas, rendition)
        }
        guard let (canvas, rendition) = work else { return }
        let result = Result { try RenditionEncoder.pixels(canvas, as: rendition) }
        spares?.keep(canvas)
        state.withLock { $0 = .finished(result) }
        finished.leave()
    }

    /// The scaled frame: scaled here if no thread has started it, else waited for.
    func result() throws -> Canvas {
        runIfUnstarted()
        finished.wait()
        return try state.withLock { state -> Result<Canvas, any Error> in
            guard case .finished(let result) = state else { preconditionFailure("waited for an unfinished scaling") }
            return result
        }.get()
    }

    /// Makes sure no thread is or will be scaling the frame: takes it if unstarted (and drops
    /// it), else waits for the thread that has it.
    func cancelOrWait() {
        let taken = state.withLock { state -> Bool in
            guard case .unstarted = state else { return false }
            state = .finished(.failure(CancellationError()))
            return true
        }
        if taken { finished.leave() } else { finished.wait() }
    }
}
