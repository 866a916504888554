import AnimatedImage
import AnimationEncoding
import Dispatch
import FoundationEssentials
import FrameCache
import Glibc
import ImageStorage
import Logging
import SystemResources

/// Storyboards and previews, made once and kept: a product on disk is served from there; one
/// that is not is brought from the shared store when there is one (``SharedProducts``, the
/// bucket of `storage.backend = s3`), else built (``DerivedBuilds``: one build per product
/// however many ask, off the event loops, its memory reserved from the decode-memory budget, its
/// frames taken from the frame cache where it holds them) and stored (``DerivedStore``, then the
/// shared store).
final class DerivedProducts: Sendable {
    let store: DerivedStore
    let shared: (any SharedProducts)?
    let builds: DerivedBuilds
    let counters = DerivedCounters()
    let images: ImageStore
    let cache: FrameCache?
    let budget: DecodeMemoryBudget?
    let settings: FlipbookSettings.Derived
    /// `cache.pngCompressionLevel`: what the seek anchors' bytes are made with.
    let pngCompressionLevel: Int
    let logger: Logger

    init(
        settings: FlipbookSettings, images: ImageStore, cache: FrameCache?, budget: DecodeMemoryBudget?,
        concurrency: Int, logger: Logger
    ) {
        store = DerivedStore(dataDirectory: settings.storage.dataDir, maxBytes: settings.derived.maxBytes)
        shared = images.sharedProducts
        builds = DerivedBuilds(concurrency: concurrency)
        self.images = images
        self.cache = cache
        self.budget = budget
        self.settings = settings.derived
        pngCompressionLevel = settings.cache.pngCompressionLevel
        self.logger = logger
    }

    /// The file name of `rendition`'s preview in `format` (its encoder's revision in it), with
    /// `background` when it is not the default white (`-bg000000`).
    static func previewName(
        _ rendition: FrameRendition, _ format: PreviewFormat = .webp, background: OpaqueBackground = .white
    ) -> String {
        "preview-\(rendition.key)\(backgroundTag(background))-r\(AnimatedImage.outputRevision)-\(format.encoderRevision)"
            + ".\(format.rawValue)"
    }

    /// How names and ETags carry a preview's background: nothing for white (the names of
    /// previews made before `background` existed), else `-bgRRGGBB`.
    static func backgroundTag(_ background: OpaqueBackground) -> String {
        background == .white ? "" : "-bg\(background.hex)"
    }

    /// The directory name of `layout`'s storyboard.
    static func storyboardName(_ layout: StoryboardLayout) -> String {
        "storyboard-\(layout.spec.key(tileHeight: layout.tileHeight))-r\(AnimatedImage.outputRevision)"
    }

    /// The file name of sheet `number` in `format`.
    static func sheetName(_ number: Int, _ format: FrameFormat) -> String { "\(number).\(format.rawValue)" }

    /// True when the preview in `format` (transparency composited onto `background` when the
    /// format has no alpha) is on disk now; else makes it and calls `completion`.
    func preview(
        _ record: StoredImage, _ rendition: FrameRendition, _ format: PreviewFormat = .webp,
        background: OpaqueBackground = .white, completion: @escaping DerivedBuilds.Completion
    ) -> Bool {
        let maxOutput = settings.maxOutputBytes
        let cache = self.cache
        return ensure(
            record, Self.previewName(rendition, format, background: background), .preview,
            reserve: { format.workingBytes($0, rendition: rendition) + $0.decodeMemory.canvasBytes },
            make: { image, staging, renderer in
                let frames = CachedRenditionFrames(cache: cache, record: record, rendition: rendition)
                defer { renderer.framesFromCache = frames.taken }
                let bytes = try format.makePreview(
                    of: image, rendition: rendition, background: background, renderer: renderer.renderer,
                    cachedFrame: frames.frame)
                guard bytes.count <= maxOutput else {
                    throw DerivedFailure.limit(
                        "derived.maxOutputBytes",
                        "The preview would be \(bytes.count) bytes, above derived.maxOutputBytes (\(maxOutput)).")
                }
                let path = staging + "/preview.\(format.rawValue)"
                try DurableFiles.write(bytes, to: path, temporaryDirectory: staging)
                return path
            }, completion: completion)
    }

    /// True when the storyboard's sheets are on disk now; else makes them and calls `completion`.
    func storyboard(
        _ record: StoredImage, _ layout: StoryboardLayout,
        completion: @escaping DerivedBuilds.Completion
    ) -> Bool {
        let maxOutput = settings.maxOutputBytes
        let cache = self.cache
        return ensure(
            record, Self.storyboardName(layout), .storyboard,
            reserve: { StoryboardMaker.workingBytes($0, layout: layout) + $0.decodeMemory.canvasBytes },
            make: { image, staging, renderer in
                let directory = staging + "/sheets"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                var total = 0
                let frames = CachedRenditionFrames(cache: cache, record: record, rendition: layout.tileRendition)
                defer { renderer.framesFromCache = frames.taken }
                try StoryboardMaker.make(
                    image, layout: layout, renderer: renderer.renderer, cachedFrame: frames.frame
                ) { number, bytes in
                    total += bytes.count
                    guard total <= maxOutput else {
                        throw DerivedFailure.limit(
                            "derived.maxOutputBytes",
                            "The storyboard's sheets would be more than derived.maxOutputBytes (\(maxOutput)) bytes.")
                    }
                    try DurableFiles.write(
                        bytes, to: directory + "/" + Self.sheetName(number, layout.spec.format),
                        temporaryDirectory: staging)
                }
                return directory
            }, completion: completion)
    }

    /// What `/stats` says of the products.
    func stats() -> DerivedStats {
        let usage = store.usage()
        let counts = builds.counts()
        return DerivedStats(
            bytes: usage.bytes, products: usage.products, evictions: usage.evictions, builds: counts.started,
            coalesced: counts.coalesced)
    }

    /// Removes every product of `record`'s content (the image was deleted), here and in the
    /// shared store.
    func removeAll(of record: StoredImage) {
        store.removeAll(of: record.sha256)
        builds.forgetFailures(prefix: record.sha256 + "/")
        do {
            try shared?.removeAll(of: record.sha256)
        } catch {
            logger.warning("shared products not removed", metadata: ["sha256": "\(record.sha256)", "error": "\(error)"])
        }
    }

    private func ensure(
        _ record: StoredImage, _ name: String, _ product: DerivedCounters.Product,
        reserve: @escaping @Sendable (AnimatedImage) -> Int,
        make: @escaping @Sendable (AnimatedImage, String, BuildRenderer) throws -> String,
        completion: @escaping DerivedBuilds.Completion
    ) -> Bool {
        if store.contains(record.sha256, name) {
            counters.hit(.disk)
            return true
        }
        builds.run(
            record.sha256 + "/" + name,
            work: { [self] in
                // Another request's build may have finished between the check and now.
                if store.contains(record.sha256, name) { return .success(()) }
                if fetchShared(record.sha256, name, directory: product == .storyboard) { return .success(()) }
                let result = build(record, name, product, reserve: reserve, make: make)
                if case .failure(let failure) = result { counters.failed(failure) }
                return result
            }, completion: completion)
        return false
    }

    /// Makes product `name` and keeps it, on disk and in the shared store.
    private func build(
        _ record: StoredImage, _ name: String, _ product: DerivedCounters.Product,
        reserve: @Sendable (AnimatedImage) -> Int,
        make: @Sendable (AnimatedImage, String, BuildRenderer) throws -> String
    ) -> Result<Void, DerivedFailure> {
        var staging: String? = nil
        defer { if let staging { try? FileManager.default.removeItem(atPath: staging) } }
        do {
            let image = try images.loadImage(record)
            let reservation = try Self.reserve(reserve(image), from: budget)
            defer { reservation?.release() }
            staging = try store.makeStaging()
            let started = ContinuousClock.now
            let renderer = BuildRenderer(image)
            let made = try make(image, staging!, renderer)
            let elapsed = started.duration(to: .now)
            counters.built(
                product, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                framesFromCache: renderer.framesFromCache, frameDecodes: renderer.renderer.decodeCount)
            try store.commit(made, record.sha256, name)
            share(record.sha256, name)
            return .success(())
        } catch let failure as DerivedFailure {
            if case .io(let why) = failure { logger.error("product not stored", metadata: ["error": "\(why)"]) }
            return .failure(failure)
        } catch ImageStore.StoreError.io(let why) {
            logger.error("product not made", metadata: ["product": "\(name)", "error": "\(why)"])
            return .failure(.io(why))
        } catch let error where Self.isImageFailure(error) {
            return .failure(.undecodable("\(error)"))
        } catch {
            logger.error("product not made", metadata: ["product": "\(name)", "error": "\(error)"])
            return .failure(.io("\(error)"))
        }
    }

    /// Whether `error` is the image's own (it does not decode) or one its frames cannot be scaled
    /// or encoded in: answered as such, not logged as a fault of the service.
    private static func isImageFailure(_ error: any Error) -> Bool {
        error is AnimatedImageError || error is ResamplingError || error is WebPEncodingError
            || error is AVIFEncodingError || error is H264EncodingError || error is VP9EncodingError
    }

    private static func reserve(_ bytes: Int, from budget: DecodeMemoryBudget?) throws(DerivedFailure) -> DecodeReservation? {
        guard let budget else { return nil }
        do {
            return try budget.reserve(bytes)
        } catch .tooLarge(let needed, let capacity) {
            throw .limit(
                "limits.maxDecodeBytes",
                "Making it needs \(needed) bytes of decode memory, above limits.maxDecodeBytes (\(capacity)).")
        } catch .queueFull {
            throw .busy
        } catch {
            throw .io("the decode-memory budget is closed (shutting down)")
        }
    }
}

/// The `derived` part of `/stats`: bytes and products kept (as this replica counts them),
/// products removed to stay within `derived.maxBytes`, builds started, and requests that joined
/// a build under way.
struct DerivedStats: Encodable, Sendable {
    var bytes: Int
    var products: Int
    var evictions: Int
    var builds: Int
    var coalesced: Int
}
