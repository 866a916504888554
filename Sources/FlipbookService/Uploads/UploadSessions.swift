import AnimatedImage
import Foundation
import FrameCache
import Synchronization

/// The upload sessions of this process, by id: created, looked up, and forgotten when they
/// expire (checked on each creation and lookup, so no timer runs). Ids are 128 random bits as
/// 32 lowercase hex digits.
final class UploadSessions: Sendable {
    let settings: FlipbookSettings.Uploads
    private let encoder: RenditionEncoder
    /// Where the sessions' frames are staged (``UploadRenderer``).
    private let cache: FrameCache
    private let sessions = Mutex<[String: UploadSession]>([:])
    /// How many sessions exist, read without the lock on every frame request.
    private let count = Atomic<Int>(0)
    /// Frame requests waiting for their bytes, against `cache.maxWaitingRequests`.
    let waiting = Atomic<Int>(0)

    init(settings: FlipbookSettings.Uploads, encoder: RenditionEncoder, cache: FrameCache) {
        self.settings = settings
        self.encoder = encoder
        self.cache = cache
    }

    /// Seconds on a monotonic clock.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// A new session, or nil when `uploads.maxSessions` are created or receiving.
    func create() -> UploadSession? {
        let now = Self.now()
        return sessions.withLock { sessions in
            purge(&sessions, now: now)
            guard sessions.values.count(where: \.isOpen) < settings.maxSessions else { return nil }
            var id = Self.newID()
            while sessions[id] != nil { id = Self.newID() }
            let session = UploadSession(id: id, now: now, renderer: UploadRenderer(owner: id, encoder: encoder, cache: cache))
            sessions[id] = session
            count.store(sessions.count, ordering: .relaxed)
            return session
        }
    }

    /// The session `id`, unless there is none or it expired.
    func session(_ id: String) -> UploadSession? {
        guard id.utf8.count == 32, count.load(ordering: .relaxed) > 0 else { return nil }
        let now = Self.now()
        return sessions.withLock { sessions in
            guard let session = sessions[id] else { return nil }
            if session.isExpired(now: now, startSeconds: settings.startSeconds, aliasSeconds: settings.aliasSeconds) {
                purge(&sessions, now: now)
                return nil
            }
            return session
        }
    }

    /// Sessions in progress (created or receiving), for `/stats`-like reporting and tests.
    var openCount: Int { sessions.withLock { $0.values.count(where: \.isOpen) } }

    private func purge(_ sessions: inout [String: UploadSession], now: Double) {
        let expired = sessions.filter {
            $0.value.isExpired(now: now, startSeconds: settings.startSeconds, aliasSeconds: settings.aliasSeconds)
        }
        for (id, session) in expired {
            sessions[id] = nil
            session.renderer.release()
        }
        count.store(sessions.count, ordering: .relaxed)
    }

    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
