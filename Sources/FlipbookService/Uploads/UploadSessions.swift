import AnimatedImage
import Dispatch
import FoundationEssentials
import FrameCache
import Synchronization

/// The upload sessions of this process, by id: created, looked up, and forgotten when they
/// expire (checked on each creation and lookup, so no timer runs). Ids are ``UploadIDs``: any
/// replica sharing `uploads.key` verifies them, and the first request with a valid id that
/// reaches a replica without the session makes it there.
final class UploadSessions: Sendable {
    /// What a lookup finds.
    enum Lookup {
        case found(UploadSession)
        /// No such session, and the id is invalid or expired.
        case unknown
        /// The id is valid but `uploads.maxSessions` are open here.
        case full
    }

    /// Ended sessions remembered at most (each ≈ 1.4 KB: an alias or a failure to report). A
    /// client that opens and cuts off sessions as fast as it can would otherwise grow memory by
    /// its rate × `uploads.aliasSeconds`; beyond this the oldest endings are forgotten early (their
    /// id then answers 404, or, within its start deadline, may open a new session).
    static let maxEndedSessions = 10_000
    /// ``maxEndedSessions``, smaller in tests.
    let maxEnded: Int

    let settings: FlipbookSettings.Uploads
    let ids: UploadIDs
    private let encoder: RenditionEncoder
    /// Where the sessions' frames are staged (``UploadRenderer``).
    private let cache: FrameCache
    private let sessions = Mutex<[String: UploadSession]>([:])
    /// Frame requests waiting for their bytes, against `cache.maxWaitingRequests`.
    let waiting = Atomic<Int>(0)

    init(
        settings: FlipbookSettings.Uploads, encoder: RenditionEncoder, cache: FrameCache,
        maxEnded: Int = UploadSessions.maxEndedSessions
    ) {
        self.settings = settings
        self.maxEnded = maxEnded
        self.encoder = encoder
        self.cache = cache
        ids = UploadIDs(key: UploadIDs.key(setting: settings.key))
    }

    /// Seconds on a monotonic clock.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Whether ids are verifiable by other replicas (`uploads.key` is set); without it only this
    /// process knows the key, so `POST /uploads` makes the session at once.
    var hasSharedKey: Bool { !settings.key.isEmpty }

    /// A new id for `POST /uploads` whose session is made where it is first used, or nil when
    /// `uploads.maxSessions` are open here (a hint that this replica is busy).
    func mint() -> String? {
        guard openCount < settings.maxSessions else { return nil }
        return ids.mint(expires: Self.startDeadline(settings))
    }

    /// A new session, or nil when `uploads.maxSessions` are created or receiving.
    func create() -> UploadSession? {
        let deadline = Self.startDeadline(settings)
        let id = ids.mint(expires: deadline)
        return register(id, startDeadline: deadline)
    }

    /// The session `id`; made here when the id is valid and no session of it is here yet (it
    /// was minted by another replica, or by this one without registering it).
    func lookup(_ id: String) -> Lookup {
        guard UploadIDs.hasShape(id) else { return .unknown }
        let now = Self.now()
        let wallNow = UploadIDs.nowMilliseconds()
        let known: UploadSession?? = sessions.withLock { sessions in
            guard let session = sessions[id] else { return .none }
            if session.isExpired(now: now, wallNow: wallNow, aliasSeconds: settings.aliasSeconds) {
                purge(&sessions, now: now, wallNow: wallNow)
                return .some(nil)
            }
            return session
        }
        if let known { return known.map(Lookup.found) ?? .unknown }
        guard case .success(let deadline) = ids.verify(id, now: wallNow) else { return .unknown }
        return register(id, startDeadline: deadline).map(Lookup.found) ?? .full
    }

    /// Registers a session of `id` (or returns the one there); nil when
    /// `uploads.maxSessions` are open.
    private func register(_ id: String, startDeadline: Int) -> UploadSession? {
        let now = Self.now()
        let wallNow = UploadIDs.nowMilliseconds()
        return sessions.withLock { sessions in
            purge(&sessions, now: now, wallNow: wallNow)
            if let session = sessions[id] { return session }
            guard sessions.values.count(where: \.isOpen) < settings.maxSessions else { return nil }
            let session = UploadSession(
                id: id, startDeadline: startDeadline, renderer: UploadRenderer(owner: id, encoder: encoder, cache: cache))
            sessions[id] = session
            return session
        }
    }

    /// `uploads.startSeconds` from now, in Unix milliseconds.
    private static func startDeadline(_ settings: FlipbookSettings.Uploads) -> Int {
        UploadIDs.nowMilliseconds() + Int((settings.startSeconds * 1000).rounded(.up))
    }

    /// The session of `id` if this process has it, without making one (tests).
    func existing(_ id: String) -> UploadSession? { sessions.withLock { $0[id] } }

    /// Sessions in progress (created or receiving), for `/stats`-like reporting and tests.
    var openCount: Int { sessions.withLock { $0.values.count(where: \.isOpen) } }

    /// Forgets the sessions expired at `now`/`wallNow`, and keeps at most ``maxEnded`` ended
    /// ones: over it, the oldest tenth of those go at once (so the sort is paid once per
    /// thousand endings, not on every registration). One walk over the sessions finds both.
    private func purge(_ sessions: inout [String: UploadSession], now: Double, wallNow: Int) {
        var gone: [String] = []
        var ended: [(id: String, at: Double)] = []
        for (id, session) in sessions {
            if session.isExpired(now: now, wallNow: wallNow, aliasSeconds: settings.aliasSeconds) {
                gone.append(id)
            } else if let at = session.endedAt {
                ended.append((id, at))
            }
        }
        if ended.count > maxEnded {
            let surplus = ended.count - maxEnded + maxEnded / 10
            gone += ended.sorted { $0.at < $1.at }.prefix(surplus).map(\.id)
        }
        for id in gone {
            sessions.removeValue(forKey: id)?.renderer.release()
        }
    }
}
