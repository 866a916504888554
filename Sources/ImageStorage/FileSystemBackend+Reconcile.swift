import Dispatch
import FoundationEssentials
import Glibc

/// Reconciliation of the data directory: what a crash (a SIGKILL, a power cut) can leave behind
/// is removed, and nothing else. It runs in the background after start-up (the store serves
/// meanwhile: none of it is visible through the API).
///
/// - `tmp/` — uploads cut off mid-body or before their record was written, and records' temporary
///   files;
/// - `images/<p>/<id>` without a record (in either layout), or `objects/<id>` of the earlier
///   layout without `meta/<id>.json` — an upload renamed into place whose record was never
///   written, or an image whose delete stopped between removing its record and its bytes.
///
/// Replicas share the directory, so a file is only removed when no live process holds its lock
/// (``FileLocks``: every such file is created locked and stays locked until its record exists);
/// bytes are removed only if, with their lock taken, they still have no record. Where the file
/// system has no `flock`, only files older than ``abandonedAfterSeconds`` are removed, the longest
/// an upload is assumed to take.
extension FileSystemBackend {
    /// Files that cannot be probed with a lock are left alone until they are this old.
    static let abandonedAfterSeconds = 3600.0

    /// What one reconciliation removed and left.
    struct Reconciliation: Sendable, Equatable, CustomStringConvertible {
        /// Images' bytes without a record, removed.
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

    /// Removes the leftovers of crashed writers (see the type's documentation), pausing `pause`
    /// microseconds after each fan-out directory (in the background, so as not to compete with
    /// requests).
    func reconcile(now: Double = Date().timeIntervalSince1970, pause: UInt32 = 0) -> Reconciliation {
        var result = Reconciliation()
        for name in Self.names(in: temporaryDirectory) {
            result.count(Self.removeIfAbandoned(temporaryDirectory + "/" + name, now: now, unlessStillNeeded: { false }))
        }
        for shard in Self.names(in: layout.images) where DataLayout.isShard(shard) {
            let directory = layout.images + "/" + shard
            for id in Self.names(in: directory) where ImageID.isWellFormed(id) && !hasRecord(id) {
                // The record is looked for again with the lock held: a writer that released its
                // lock wrote the record first.
                result.count(
                    Self.removeIfAbandoned(directory + "/" + id, now: now, unlessStillNeeded: { hasRecord(id) }),
                    orphan: true)
            }
            if pause > 0 { usleep(pause) }
        }
        for id in Self.names(in: layout.legacyObjects) where ImageID.isWellFormed(id) {
            let record = layout.legacyRecordPath(id)
            guard access(record, F_OK) != 0 else { continue }
            result.count(
                Self.removeIfAbandoned(
                    layout.legacyObjectPath(id), now: now, unlessStillNeeded: { access(record, F_OK) == 0 }),
                orphan: true)
        }
        try? DurableFiles.syncDirectory(of: temporaryDirectory + "/.")
        return result
    }

    /// Start-up's background work — the earlier layout moved, then reconciliation — and a sweep
    /// of the earlier layout every minute after (a replica of an earlier version may write there
    /// during a rolling upgrade), for as long as the backend lives.
    func startMaintenance() {
        maintenance.async { [weak self] in self?.maintain(reconciling: true) }
    }

    private func maintain(reconciling: Bool) {
        do {
            let migration = try migrateLegacyLayout()
            if migration.moved > 0 {
                logger.notice("images of the earlier layout moved", metadata: ["migration": "\(migration)"])
                scheduleSummaryFill()
            }
        } catch {
            logger.error("images of the earlier layout not moved; retried in a minute", metadata: ["error": "\(error)"])
        }
        if reconciling {
            let result = reconcile(pause: 1000)
            if result.removed > 0 {
                logger.notice("removed what a crash left in the data directory", metadata: ["reconciled": "\(result)"])
            }
        }
        maintenance.asyncAfter(deadline: .now() + 60) { [weak self] in self?.maintain(reconciling: false) }
    }

    fileprivate enum Outcome {
        case removed, inUse, tooRecent, kept
    }

    /// Removes `path` if no live process holds it and `unlessStillNeeded` (asked with the lock
    /// held) says it is not needed after all.
    fileprivate static func removeIfAbandoned(_ path: String, now: Double, unlessStillNeeded: () -> Bool) -> Outcome {
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

extension FileSystemBackend.Reconciliation {
    fileprivate mutating func count(_ outcome: FileSystemBackend.Outcome, orphan: Bool = false) {
        switch outcome {
        case .removed: if orphan { orphanObjects += 1 } else { temporaryFiles += 1 }
        case .inUse: inUse += 1
        case .tooRecent: tooRecent += 1
        case .kept: break
        }
    }
}
