import AnimatedImage
import FoundationEssentials

/// The shared store behind the local one (`storage.backend = s3`): a product this replica lacks
/// is looked for there before it is built, and one it built is put there. The shared store is
/// best effort — when it cannot be reached, products are built and kept locally (logged).
extension DerivedProducts {
    /// True when product `name` of `sha256` was brought from the shared store into the local one.
    /// Called off the event loops (it waits on the network).
    func fetchShared(_ sha256: String, _ name: String, directory: Bool) -> Bool {
        guard let shared else { return false }
        var staging: String? = nil
        defer { if let staging { try? FileManager.default.removeItem(atPath: staging) } }
        do {
            staging = try store.makeStaging()
            let destination = staging! + (directory ? "/sheets" : "/product")
            guard try shared.fetch(sha256, name, directory: directory, into: destination) else { return false }
            try store.commit(destination, sha256, name)
            counters.hit(.shared)
            return true
        } catch {
            logger.warning("shared product not read", metadata: ["product": "\(sha256)/\(name)", "error": "\(error)"])
            return false
        }
    }

    /// Puts the kept product `name` of `sha256` into the shared store.
    func share(_ sha256: String, _ name: String) {
        guard let shared else { return }
        do {
            try shared.put(sha256, name, from: store.path(sha256, name))
        } catch {
            logger.warning("product not shared", metadata: ["product": "\(sha256)/\(name)", "error": "\(error)"])
        }
    }

    /// Brings storyboard `name` of `sha256` (whose sheet a client asks for, having had the
    /// manifest from another replica) from the shared store; `completion` gets `.notShared`
    /// when it is not there. False: the answer comes later (it is never on disk yet here).
    func fetchSheets(_ sha256: String, _ name: String, completion: @escaping DerivedBuilds.Completion) -> Bool {
        builds.run(
            "fetch:" + sha256 + "/" + name,
            work: { [self] in
                store.contains(sha256, name) || fetchShared(sha256, name, directory: true) ? .success(()) : .failure(.notShared)
            }, completion: completion)
        return false
    }
}

/// The renderer of one build, and what its frames cost: decoded (``FrameRenderer/decodeCount``)
/// or taken from the frame cache.
final class BuildRenderer {
    let renderer: FrameRenderer
    var framesFromCache = 0

    /// In order, each frame once: checkpoints would never be used (nor are they budgeted).
    init(_ image: AnimatedImage) {
        renderer = FrameRenderer(image: image, checkpointBudget: 0)
    }
}
