import Dispatch
import Synchronization
import SystemResources

/// The rendition frames of a list of frame indices, in order, for the products made of a whole
/// animation (previews, storyboards). Three kinds of work overlap so that the caller — which
/// encodes or draws in order — rarely waits:
///
/// - a producer thread renders the frames in order (a renderer composites one frame on the
///   last) and copies what scaling needs out of the renderer's canvas, up to
///   ``framesAhead(_:)`` frames ahead of the one handed back;
/// - a frame that differs from the one rendered before it only in part (most GIF frames: a
///   small rectangle redrawn) has only the output pixels that part reaches scaled
///   (``Resampler/affected(by:sourceWidth:sourceHeight:width:height:)``), by the producer,
///   and pasted in order over the previous frame's scaling — exactly the bytes of scaling it
///   whole;
/// - a frame scaled whole is scaled on another thread — or by the caller, while the frame it
///   needs is being scaled by someone else, if no thread has started it.
///
/// For canvases above 64 MB (``framesAhead(_:)`` 0) there is no producer and nothing is copied:
/// each frame is rendered and scaled on the calling thread, from the renderer's own canvas,
/// before the next is rendered.
///
/// The renderer is the producer's while the stream lives; the stream, once released, has
/// waited for every thread it started.
final class ScaledFrameStream {
    private let rendition: FrameRendition
    private let ahead: Int
    private let producer: FrameProducer
    /// The last rendered frame scaled whole (before any crop): what a part is pasted over.
    private var whole: Canvas?
    private var ended = false

    /// A stream of `indices`' frames of `image` in `rendition`: `cachedFrame` gives a frame's
    /// rendition pixels when they are at hand already (a frame cache), else nil — called on
    /// the producer thread, one call at a time; the others are rendered by `renderer` and
    /// scaled, up to `ahead` frames ahead (nil: ``framesAhead(_:)``).
    init(
        _ image: AnimatedImage, rendition: FrameRendition, indices: [Int], renderer: FrameRenderer,
        ahead: Int? = nil, cachedFrame: @escaping (Int) -> Canvas?
    ) {
        self.rendition = rendition
        self.ahead = ahead ?? Self.framesAhead(image)
        producer = FrameProducer(
            rendition: rendition, indices: indices, renderer: renderer, cachedFrame: cachedFrame,
            copies: self.ahead > 0, slots: self.ahead + 1)
        if self.ahead > 0 { producer.start() }
    }

    deinit {
        producer.stop()  // no work left behind
    }

    /// The next index's frame, or nil after the last.
    func next() throws -> (index: Int, frame: Canvas)? {
        guard !ended else { return nil }
        let item = ahead > 0 ? producer.take() : producer.produceNext()
        defer { if ahead > 0 { producer.release() } }
        switch item {
        case .end:
            ended = true
            return nil
        case .failed(let error):
            ended = true
            throw error
        case .cached(let index, let frame):
            return (index, frame)
        case .rendered(let index, let scaling):
            // While another thread scales this frame, scale the next ones not yet started here.
            if ahead > 0 && !scaling.isFinished { producer.helpWithQueued(until: scaling) }
            let scaled: ScaledPixels
            do {
                scaled = try scaling.result()
            } catch {
                ended = true
                throw error
            }
            switch scaled {
            case .whole(let frame): whole = frame
            case .part(let part, let rect): whole?.paste(part.pixels, into: rect)
            case .unchanged: break
            }
            guard let whole else { preconditionFailure("a part of a frame with nothing scaled before it") }
            return (index, RenditionEncoder.cropped(whole, as: rendition))
        }
    }

    /// Frames scaled ahead of the one handed back: 4, or none (each frame scaled before the next
    /// is rendered) for canvases above 64 MB, so the canvases waiting to be scaled stay a few.
    static func framesAhead(_ image: AnimatedImage) -> Int {
        image.decodeMemory.canvasBytes > 64 << 20 ? 0 : 4
    }

    /// What the stream may hold besides the renderer's canvas and one scaling: the last frame
    /// scaled whole, and up to ``framesAhead(_:)`` + 1 frames produced and not handed back
    /// (each a copy of the canvas, the scaler's work and the scaled frame, all scaling at once
    /// at worst); no copies when none are scaled ahead.
    static func aheadBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let ahead = framesAhead(image)
        let output = rendition.scaledWidth * rendition.scaledHeight * 4
        guard ahead > 0 else { return output }
        let scaling = RenditionEncoder.workingBytes(rendition, width: image.canvasWidth, height: image.canvasHeight)
        return output + (ahead + 1) * (image.decodeMemory.canvasBytes + scaling + output)
    }
}

/// What the producer hands the stream for one index, in order.
enum ProducedFrame {
    /// The rendition frame as the cache held it.
    case cached(Int, Canvas)
    /// A rendered frame, scaled or being scaled (whole or in part).
    case rendered(Int, FrameScaling)
    /// The frame did not render: the stream ends with this error.
    case failed(any Error)
    /// Every index has been produced.
    case end
}

/// Renders the stream's frames in order and plans each one's scaling: on a thread of its own,
/// at most `slots` frames ahead of the consumer (``start()``), or one at a time on the
/// consumer's thread (``produceNext()``). Its mutable state (the renderer, the position) is
/// touched by one thread at a time — the producer thread between ``start()`` and its end, which
/// ``stop()`` waits for — and the queue is behind a lock: hence `@unchecked Sendable`.
final class FrameProducer: @unchecked Sendable {
    private let rendition: FrameRendition
    private let indices: [Int]
    private let renderer: FrameRenderer
    private let cachedFrame: (Int) -> Canvas?
    /// Copy what scaling reads out of the renderer's canvas (frames scaled while it renders on).
    private let copies: Bool
    private let spares = SpareCanvases()
    /// Whether a frame's scaling can be made in parts at all (a reduction by the kernel alone).
    private let scalesInParts: Bool
    private var position = 0
    /// Whether the canvas the renderer returned last was opaque (nil: not rendered here yet).
    private var lastOpaque: Bool?

    private let queue = Mutex<[ProducedFrame]>([])
    private let produced = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchGroup()
    private var running = false

    init(
        rendition: FrameRendition, indices: [Int], renderer: FrameRenderer, cachedFrame: @escaping (Int) -> Canvas?,
        copies: Bool, slots: Int
    ) {
        self.rendition = rendition
        self.indices = indices
        self.renderer = renderer
        self.cachedFrame = cachedFrame
        self.copies = copies
        // Made at 0 and raised: libdispatch traps when a semaphore is freed below its initial value.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<slots { free.signal() }
        let image = renderer.image
        scalesInParts =
            Resampler.affected(
                by: PixelRect(x: 0, y: 0, width: 1, height: 1), sourceWidth: image.canvasWidth,
                sourceHeight: image.canvasHeight, width: rendition.scaledWidth, height: rendition.scaledHeight) != nil
    }

    /// Starts producing on a thread of its own. A part is scaled there and then (a fraction of
    /// rendering's cost); a whole frame on another thread, so that more cores share the work.
    func start() {
        running = true
        finished.enter()
        DetachedThread.start { [self] in
            while true {
                free.wait()
                let item = stopping.load(ordering: .acquiring) ? .end : produceNext()
                if case .rendered(_, let scaling) = item, !scaling.isFinished {
                    if scaling.isWhole {
                        DispatchQueue.global().async { scaling.runIfUnstarted() }
                    } else {
                        scaling.runIfUnstarted()
                    }
                }
                queue.withLock { $0.append(item) }
                produced.signal()
                if case .failed = item { break }
                if case .end = item { break }
            }
            finished.leave()
        }
    }

    /// The next item from the producer thread, waited for.
    func take() -> ProducedFrame {
        produced.wait()
        return queue.withLock { $0.removeFirst() }
    }

    /// Gives the producer back the slot of an item taken and done with.
    func release() { free.signal() }

    /// Scales queued frames no thread has started, until `scaling` has finished.
    func helpWithQueued(until scaling: FrameScaling) {
        let queued = queue.withLock { items in
            items.compactMap { item -> FrameScaling? in
                if case .rendered(_, let other) = item { return other }
                return nil
            }
        }
        for other in queued where !scaling.isFinished { other.runIfUnstarted() }
    }

    /// Stops the producer thread (if started) and waits for it and for every scaling it queued.
    func stop() {
        guard running else { return }
        stopping.store(true, ordering: .releasing)
        free.signal()
        finished.wait()
        let left = queue.withLock { items in
            defer { items.removeAll() }
            return items
        }
        for case .rendered(_, let scaling) in left { scaling.cancelOrWait() }
    }

    /// The next index's item: the cache's frame, or the frame rendered with its scaling planned.
    func produceNext() -> ProducedFrame {
        guard position < indices.count else { return .end }
        let index = indices[position]
        position += 1
        if let cached = cachedFrame(index) { return .cached(index, cached) }
        let canvas: Canvas
        do {
            canvas = try renderer.render(index)
        } catch {
            position = indices.count
            return .failed(error)
        }
        let plan = planScaling(canvas)
        let spares = copies ? self.spares : nil
        switch plan {
        case .unchanged:
            return .rendered(index, FrameScaling(finished: .success(.unchanged)))
        case .whole:
            let source = copies ? self.spares.copy(of: canvas) : canvas
            return .rendered(index, FrameScaling(source, plan, rendition: rendition, spares: spares))
        case .part(let rect, _):
            let rows =
                Resampler.rowsRead(
                    for: rect, sourceWidth: canvas.width, sourceHeight: canvas.height, width: rendition.scaledWidth,
                    height: rendition.scaledHeight) ?? 0..<canvas.height
            let source = copies ? self.spares.copy(rows, of: canvas) : canvas
            return .rendered(index, FrameScaling(source, plan, rendition: rendition, spares: spares))
        }
    }

    /// Whole, or the part the renderer's change reaches when the frame before was rendered
    /// here and the canvas stayed opaque or not (the scaler treats the two apart).
    private func planScaling(_ canvas: Canvas) -> ScalingPlan {
        guard scalesInParts else { return .whole }
        guard let previousOpaque = lastOpaque, let changed = renderer.changedByLastRender?.intersection(canvas.rect),
            let affected = Resampler.affected(
                by: changed, sourceWidth: canvas.width, sourceHeight: canvas.height, width: rendition.scaledWidth,
                height: rendition.scaledHeight)
        else {
            lastOpaque = canvas.isOpaque
            return .whole
        }
        // The rest of an opaque canvas is as opaque as before; otherwise look at all of it.
        let opaque = previousOpaque ? canvas.isOpaque(in: changed) : canvas.isOpaque
        lastOpaque = opaque
        guard opaque == previousOpaque else { return .whole }
        return affected.isEmpty ? .unchanged : .part(affected, opaque: opaque)
    }
}
