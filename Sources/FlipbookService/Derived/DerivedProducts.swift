import AnimatedImage
import Dispatch
import Foundation
import FrameCache
import Logging

/// Storyboards and previews, made once and kept: a product on disk is served from there; one
/// that is not is built (``DerivedBuilds``: one build per product however many ask, off the event
/// loops, its memory reserved from the decode-memory budget) and stored (``DerivedStore``).
final class DerivedProducts: Sendable {
    let store: DerivedStore
    let builds: DerivedBuilds
    let images: ImageStore
    let budget: DecodeMemoryBudget?
    let settings: FlipbookSettings.Derived
    let logger: Logger

    init(settings: FlipbookSettings, images: ImageStore, budget: DecodeMemoryBudget?, concurrency: Int, logger: Logger) {
        store = DerivedStore(dataDirectory: settings.storage.dataDir, maxBytes: settings.derived.maxBytes)
        builds = DerivedBuilds(concurrency: concurrency)
        self.images = images
        self.budget = budget
        self.settings = settings.derived
        self.logger = logger
    }

    /// The file name of `rendition`'s preview.
    static func previewName(_ rendition: FrameRendition) -> String {
        "preview-\(rendition.key)-r\(AnimatedImage.outputRevision).webp"
    }

    /// The directory name of `layout`'s storyboard.
    static func storyboardName(_ layout: StoryboardLayout) -> String {
        "storyboard-\(layout.spec.key(tileHeight: layout.tileHeight))-r\(AnimatedImage.outputRevision)"
    }

    /// The file name of sheet `number` in `format`.
    static func sheetName(_ number: Int, _ format: FrameFormat) -> String { "\(number).\(format.rawValue)" }

    /// True when the preview is on disk now; else makes it and calls `completion`.
    func preview(
        _ record: StoredImage, _ rendition: FrameRendition,
        completion: @escaping DerivedBuilds.Completion
    ) -> Bool {
        let maxOutput = settings.maxOutputBytes
        return ensure(
            record, Self.previewName(rendition),
            reserve: { PreviewMaker.workingBytes($0, rendition: rendition) + $0.decodeMemory.canvasBytes },
            make: { image, staging in
                let bytes = try PreviewMaker.make(image, rendition: rendition)
                guard bytes.count <= maxOutput else {
                    throw DerivedFailure.limit(
                        "derived.maxOutputBytes",
                        "The preview would be \(bytes.count) bytes, above derived.maxOutputBytes (\(maxOutput)).")
                }
                let path = staging + "/preview.webp"
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
        return ensure(
            record, Self.storyboardName(layout),
            reserve: { StoryboardMaker.workingBytes($0, layout: layout) + $0.decodeMemory.canvasBytes },
            make: { image, staging in
                let directory = staging + "/sheets"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                var total = 0
                try StoryboardMaker.make(image, layout: layout) { number, bytes in
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

    /// Removes every product of `record`'s content (the image was deleted).
    func removeAll(of record: StoredImage) {
        store.removeAll(of: record.sha256)
        builds.forgetFailures(prefix: record.sha256 + "/")
    }

    private func ensure(
        _ record: StoredImage, _ name: String, reserve: @escaping @Sendable (AnimatedImage) -> Int,
        make: @escaping @Sendable (AnimatedImage, String) throws -> String,
        completion: @escaping DerivedBuilds.Completion
    ) -> Bool {
        if store.contains(record.sha256, name) { return true }
        let (store, images, budget, logger) = (self.store, self.images, self.budget, self.logger)
        builds.run(
            record.sha256 + "/" + name,
            work: {
                // Another request's build may have finished between the check and now.
                if store.contains(record.sha256, name) { return .success(()) }
                var staging: String? = nil
                defer { if let staging { try? FileManager.default.removeItem(atPath: staging) } }
                do {
                    let image = try images.loadImage(record)
                    let reservation = try Self.reserve(reserve(image), from: budget)
                    defer { reservation?.release() }
                    staging = try store.makeStaging()
                    let made = try make(image, staging!)
                    try store.commit(made, record.sha256, name)
                    return .success(())
                } catch let failure as DerivedFailure {
                    if case .io(let why) = failure { logger.error("product not stored", metadata: ["error": "\(why)"]) }
                    return .failure(failure)
                } catch ImageStore.StoreError.io(let why) {
                    logger.error("product not made", metadata: ["product": "\(name)", "error": "\(why)"])
                    return .failure(.io(why))
                } catch let error as AnimatedImageError {
                    return .failure(.undecodable("\(error)"))
                } catch let error as WebPEncodingError {
                    return .failure(.undecodable("\(error)"))
                } catch let error as ResamplingError {
                    return .failure(.undecodable("\(error)"))
                } catch {
                    logger.error("product not made", metadata: ["product": "\(name)", "error": "\(error)"])
                    return .failure(.io("\(error)"))
                }
            }, completion: completion)
        return false
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
