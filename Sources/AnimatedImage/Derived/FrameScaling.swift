import Dispatch
import Synchronization

/// How one rendered frame of a ``ScaledFrameStream`` is scaled.
enum ScalingPlan: Sendable {
    /// All of it.
    case whole
    /// Only this rectangle of the output (the rest is the previous frame's); `opaque` says the
    /// whole canvas is (``Resampler/scale(_:width:height:only:opaque:)``).
    case part(PixelRect, opaque: Bool)
    /// Nothing: the output is the previous frame's.
    case unchanged
}

/// A frame scaled as its ``ScalingPlan`` said.
enum ScaledPixels: Sendable {
    case whole(Canvas)
    /// These pixels go at this rectangle of the previous frame's output.
    case part(Canvas, PixelRect)
    case unchanged
}

/// One frame's scaling, run once by whichever thread comes first: a worker, or the caller
/// when it needs the frame (``result()``).
final class FrameScaling: Sendable {
    private enum State {
        case unstarted(Canvas, ScalingPlan)
        case running
        case finished(Result<ScaledPixels, any Error>)
    }

    private let state: Mutex<State>
    private let rendition: FrameRendition?
    /// Left when the scaling finishes (entered at creation unless already finished).
    private let finished = DispatchGroup()
    /// Where the canvas goes once scaled (nil: it is the renderer's).
    private let spares: SpareCanvases?

    /// True when the frame is scaled whole (not in part, not unchanged).
    let isWhole: Bool

    init(_ canvas: Canvas, _ plan: ScalingPlan, rendition: FrameRendition, spares: SpareCanvases?) {
        state = Mutex(.unstarted(canvas, plan))
        if case .whole = plan { isWhole = true } else { isWhole = false }
        self.rendition = rendition
        self.spares = spares
        finished.enter()
    }

    init(finished result: Result<ScaledPixels, any Error>) {
        state = Mutex(.finished(result))
        isWhole = false
        rendition = nil
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
        let work: (Canvas, ScalingPlan)? = state.withLock { state in
            guard case .unstarted(let canvas, let plan) = state else { return nil }
            state = .running
            return (canvas, plan)
        }
        guard let (canvas, plan) = work, let rendition else { return }
        let (width, height) = (rendition.scaledWidth, rendition.scaledHeight)
        let result = Result { () throws -> ScaledPixels in
            switch plan {
            case .whole:
                return .whole(try Resampler.scale(canvas, width: width, height: height))
            case .part(let rect, let opaque):
                return .part(try Resampler.scale(canvas, width: width, height: height, only: rect, opaque: opaque), rect)
            case .unchanged:
                return .unchanged
            }
        }
        spares?.keep(canvas)
        state.withLock { $0 = .finished(result) }
        finished.leave()
    }

    /// The scaled frame: scaled here if no thread has started it, else waited for.
    func result() throws -> ScaledPixels {
        runIfUnstarted()
        finished.wait()
        return try state.withLock { state -> Result<ScaledPixels, any Error> in
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

/// Canvases a scaled frame is done with, to copy the next rendered frames into. A rendered
/// canvas shares its storage with the renderer's, which the next frame's compositing would then
/// copy into new memory: in the service, whose canvas-sized allocations are mapped on their own
/// (``ReleasedMemory/configureProcessAllocator()``), that cost a storyboard a third of its time
/// in page faults. Copied here into a canvas already mapped, it leaves the renderer's unshared.
final class SpareCanvases: Sendable {
    private let canvases = Mutex<[Canvas]>([])

    /// `canvas`'s pixels in a canvas of their own (a spare one when there is one).
    func copy(of canvas: Canvas) -> Canvas {
        copy(0..<canvas.height, of: canvas)
    }

    /// A canvas of `canvas`'s size (a spare one when there is one) whose rows `rows` are
    /// `canvas`'s; its other rows hold whatever they held.
    func copy(_ rows: Range<Int>, of canvas: Canvas) -> Canvas {
        var copy = canvases.withLock { $0.popLast() } ?? Canvas(width: canvas.width, height: canvas.height)
        if copy.width != canvas.width || copy.height != canvas.height {
            copy = Canvas(width: canvas.width, height: canvas.height)
        }
        copy.copyRows(rows, from: canvas)
        return copy
    }

    /// Keeps `canvas` for a later copy.
    func keep(_ canvas: Canvas) {
        canvases.withLock { $0.append(canvas) }
    }
}
