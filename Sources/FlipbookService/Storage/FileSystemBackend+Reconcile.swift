import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Start-up reconciliation of the data directory: what a crash (a SIGKILL, a power cut) can leave
/// behind is removed, and nothing else.
///
/// - `tmp/` — uploads cut off mid-body or before their record was written, and records' temporary
///   files;
/// - `objects/<id>` without `meta/<id>.json` — an upload renamed into place whose record was never
///   written, or an image whose delete stopped between removing its record and its bytes.
///
/// Neither is visible through the API. Replicas share the directory, so a file is only removed
/// when no live process holds its lock (``FileLocks``: every such file is created locked and stays
/// locked until its record exists); an object is removed only if, with its lock taken, it still
/// has no record. Where the file system has no `flock`, only files older than
/// ``abandonedAfterSeconds`` are removed, the longest an upload is assumed to take.
extension FileSystemBackend {
    /// Files that cannot be probed with a lock are left alone until they are this old.
    static let abandonedAfterSeconds = 3600.0

    /// What one reconciliation removed and left.
    struct Reconciliation: Sendable, Equatable, CustomStringConvertible {
        /// Objects without a record, removed.
        var orphanObjects = 0
        /// Files of `tmp/`, removed.
        var temporaryFiles = 0
        /// Files left because a live process (another replica, or this one) holds them.
        var inUse = 0
        /// Files left because locks are not supported here and they are recent.
        var tooRecent = 0

        var removed: Int { orphanObjects + temporaryFiles }

        var description: String {
            "\(orphanObjects) orphan object(s) and \(temporaryFiles) temporary file(s) removed; "
                + "\(inUse) in use, \(tooRecent) too recent to tell"
        }
    }

    /// Removes the leftovers of crashed writers (see the type's documentation).
    func reconcile(now: Double = Date().timeIntervalSince1970) -> Reconciliation {
        Self.reconcile(objects: objectsDirectory, meta: metaDirectory, temporary: temporaryDirectory, now: now)
    }

    static func reconcile(objects: String, meta: String, temporary: String, now: Double) -> Reconciliation {
        var result = Reconciliation()
        var touched: Set<String> = []
        for name in names(in: temporary) {
            let path = temporary + "/" + name
            switch removeIfAbandoned(path, now: now, unlessStillNeeded: { false }) {
            case .removed: result.temporaryFiles += 1; touched.insert(temporary)
            case .inUse: result.inUse += 1
            case .tooRecent: result.tooRecent += 1
            case .kept: break
            }
        }
        for id in names(in: objects) where ImageID.isWellFormed(id) {
            let record = meta + "/" + id + ".json"
            guard FileStamp(path: record) == nil else { continue }
            // The record is looked for again with the lock held: a writer that released its lock
            // wrote the record first.
            switch removeIfAbandoned(objects + "/" + id, now: now, unlessStillNeeded: { FileStamp(path: record) != nil }) {
            case .removed: result.orphanObjects += 1; touched.insert(objects)
            case .inUse: result.inUse += 1
            case .tooRecent: result.tooRecent += 1
            case .kept: break
            }
        }
        for directory in touched {
            try? DurableFiles.syncDirectory(of: directory + "/.")
        }
        return result
    }

    private enum Outcome {
        case removed, inUse, tooRecent, kept
    }

    /// Removes `path` if no live process holds it and `unlessStillNeeded` (asked with the lock
    /// held) says it is not needed after all.
    private static func removeIfAbandoned(_ path: String, now: Double, unlessStillNeeded: () -> Bool) -> Outcome {
        switch FileLocks.probe(path) {
        case .unheld(let fd):
            defer { close(fd) }
            if unlessStillNeeded() { return .kept }
            return unlink(path) == 0 ? .removed : .kept
        case .held:
            return .inUse
        case .missing:
            return .kept
        case .unsupported:
            guard let stamp = FileStamp(path: path) else { return .kept }
            guard now - stamp.modified > abandonedAfterSeconds else { return .tooRecent }
            if unlessStillNeeded() { return .kept }
            return unlink(path) == 0 ? .removed : .kept
        }
    }

    private static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }
}
