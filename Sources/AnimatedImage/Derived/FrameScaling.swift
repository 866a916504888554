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

/// One frame's scaling (``DeferredWork``: run once by whichever thread comes first — a worker,
/// or the caller when it needs the frame).
final class FrameScaling: Sendable {
    private let work: DeferredWork<ScaledPixels>
    /// True when the frame is scaled whole (not in part, not unchanged).
    let isWhole: Bool

    /// The scaling of `canvas` as `plan` says; `canvas` goes back to `spares` once scaled (nil:
    /// it is the renderer's).
    init(_ canvas: Canvas, _ plan: ScalingPlan, rendition: FrameRendition, spares: SpareCanvases?) {
        if case .whole = plan { isWhole = true } else { isWhole = false }
        let (width, height) = (rendition.scaledWidth, rendition.scaledHeight)
        work = DeferredWork {
            defer { spares?.keep(canvas) }
            switch plan {
            case .whole:
                return .whole(try Resampler.scale(canvas, width: width, height: height))
            case .part(let rect, let opaque):
                return .part(try Resampler.scale(canvas, width: width, height: height, only: rect, opaque: opaque), rect)
            case .unchanged:
                return .unchanged
            }
        }
    }

    init(finished result: Result<ScaledPixels, any Error>) {
        work = DeferredWork(finished: result)
        isWhole = false
    }

    var isFinished: Bool { work.isFinished }
    func runIfUnstarted() { work.runIfUnstarted() }
    func result() throws -> ScaledPixels { try work.result() }
    func cancelOrWait() { work.cancelOrWait() }
}

/// Canvases a scaled frame is done with, to copy the next rendered frames into. A rendered
/// canvas shares its storage with the renderer's, which the next frame's compositing would then
/// copy into new memory: in the service, whose large allocations are mapped on their own
/// (``ReleasedMemory/configureProcessAllocator()``; every canvas of 128 KiB or more when this was
/// written), that cost a storyboard a third of its time in page faults. Copied here into a canvas
/// already in memory, it leaves the renderer's unshared.
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
