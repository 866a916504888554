import AnimatedImage
import Dispatch
import FoundationEssentials
import HTTPServer
import Synchronization

/// One upload session (`POST /uploads`): created empty, then receiving its body (`PUT`), then
/// either an alias of the stored image or a failure that later requests are told about.
///
/// While the body arrives, the prefix received so far is indexed (on the session's own serial
/// queue, one index at a time) with the ordinary indexers, which serve the complete frames of a cut file:
/// ``Progress`` holds the latest index — a prefix and the frames it holds, one state, so what
/// `GET /uploads/{uploadId}` reports of the bytes and of the frames agree — and `frameCount`
/// never goes down.
/// Frame requests for frames not yet in wait here (``FrameWaiter``) and are answered when an
/// index shows their frame, when the session ends, or when their wait runs out.
final class UploadSession: Sendable {
    /// Where a session is.
    enum Phase: Sendable {
        /// Created; no `PUT` yet.
        case created
        /// A `PUT` is streaming the body.
        case receiving
        /// Stored: the session is an alias of `/images/{id}`.
        case stored(id: String)
        /// Refused or cut off: later requests get `status` and `detail`.
        case failed(status: HTTPStatus, detail: String)
    }

    /// The latest index of the prefix: the bytes it was made from and the image they hold (nil
    /// while they are not an image yet).
    struct Progress: Sendable {
        var image: AnimatedImage?
        /// The byte count `image` was indexed from.
        var indexedBytes = 0
        var frameCount: Int { image?.frameCount ?? 0 }

        /// Whether an index of `bytes` bytes holding `image` is newer than this one: more bytes,
        /// and no fewer frames (an index that found less is not kept, so frames never go away).
        func isOlder(than image: AnimatedImage?, bytes: Int) -> Bool {
            guard bytes > indexedBytes else { return false }
            guard let image else { return self.image == nil }
            return image.frameCount >= frameCount
        }
    }

    private struct State {
        var phase = Phase.created
        /// The Unix time in milliseconds by which the `PUT` must come: the id's expiry.
        var startDeadline: Int
        /// When the session finished (stored or failed), for the alias's lifetime.
        var ended: Double?
        var bytesReceived = 0
        var path: String?
        var progress = Progress()
        var indexing = false
        var waiters: [FrameWaiter] = []
    }

    let id: String
    /// Composites and encodes the frames served while the body arrives.
    let renderer: UploadRenderer
    /// Where the prefix is indexed and progress polls are answered, in turn: a serial queue of
    /// the session's own, so a waiting request never waits for Dispatch's shared pool (see
    /// ``RequestDeadlines``), nor for another session's index.
    let indexQueue = DispatchQueue(label: "flipbook.upload-index")
    private let state: Mutex<State>

    init(id: String, startDeadline: Int, renderer: UploadRenderer) {
        self.id = id
        self.renderer = renderer
        state = Mutex(State(startDeadline: startDeadline))
    }

    var phase: Phase { state.withLock { $0.phase } }
    var bytesReceived: Int { state.withLock { $0.bytesReceived } }
    var progress: Progress { state.withLock { $0.progress } }

    /// A session still takes part in the limit on sessions: created or receiving.
    var isOpen: Bool {
        state.withLock {
            switch $0.phase {
            case .created, .receiving: true
            case .stored, .failed: false
            }
        }
    }

    /// When the session ended (monotonic seconds), or nil while created or receiving.
    var endedAt: Double? { state.withLock { $0.ended } }

    /// Whether the session is gone at `now` (monotonic seconds) and `wallNow` (Unix
    /// milliseconds): created without a `PUT` by its start deadline, or ended `aliasSeconds` ago
    /// — and never before its id expired, so an id is not made into a new session a second time.
    func isExpired(now: Double, wallNow: Int, aliasSeconds: Double) -> Bool {
        state.withLock {
            switch $0.phase {
            case .created: wallNow >= $0.startDeadline
            case .receiving: false
            case .stored, .failed: now - ($0.ended ?? now) >= aliasSeconds && wallNow >= $0.startDeadline
            }
        }
    }

    /// Moves a created session to receiving into `path`; false when it is not in `created`.
    func beginReceiving(path: String) -> Bool {
        state.withLock {
            guard case .created = $0.phase else { return false }
            $0.phase = .receiving
            $0.path = path
            return true
        }
    }

    /// The body grew to `total` bytes. Returns whether an index of the prefix should start now
    /// (someone waits for a frame and no index is running).
    func received(total: Int) -> Bool {
        state.withLock {
            $0.bytesReceived = total
            guard !$0.waiters.isEmpty, !$0.indexing, case .receiving = $0.phase else { return false }
            $0.indexing = true
            return true
        }
    }

    /// Marks an index as started unless one runs (or the session is not receiving).
    func claimIndexing() -> Bool {
        state.withLock {
            guard !$0.indexing, case .receiving = $0.phase, $0.path != nil else { return false }
            $0.indexing = true
            return true
        }
    }

    /// The temporary file and its length now, for the indexer.
    var prefixSource: (path: String, bytes: Int)? {
        state.withLock { state in state.path.map { ($0, state.bytesReceived) } }
    }

    /// An index of `bytes` bytes (nil: the prefix is not an image yet): kept when it is newer than
    /// the one held (``Progress/isOlder(than:bytes:)``) and the session is still receiving (an
    /// index that finishes after the end is dropped, so an ended session holds no mapping of its
    /// prefix). Returns the waiters now ready (to be answered from the returned progress).
    func offer(_ image: AnimatedImage?, bytes: Int) -> (ready: [FrameWaiter], progress: Progress) {
        state.withLock {
            if $0.progress.isOlder(than: image, bytes: bytes), case .receiving = $0.phase {
                $0.progress = Progress(image: image, indexedBytes: bytes)
            }
            let progress = $0.progress
            let ready = $0.waiters.filter { $0.isReady(progress) }
            $0.waiters.removeAll { $0.isReady(progress) }
            return (ready, progress)
        }
    }

    /// The index of `bytes` bytes that ``claimIndexing()`` or ``received(total:)`` started is
    /// done: true to index again (the body grew and someone still waits), else the claim ends.
    func finishIndexing(bytes: Int) -> Bool {
        state.withLock {
            if case .receiving = $0.phase, !$0.waiters.isEmpty, $0.bytesReceived > bytes { return true }
            $0.indexing = false
            return false
        }
    }

    /// Adds a waiter unless its frame is in already or the session is no longer receiving; nil
    /// when added, else the phase and progress to answer from.
    func wait(_ waiter: FrameWaiter) -> (Phase, Progress)? {
        state.withLock {
            if case .receiving = $0.phase, !waiter.isReady($0.progress) {
                $0.waiters.append(waiter)
                return nil
            }
            if case .created = $0.phase {
                $0.waiters.append(waiter)
                return nil
            }
            return ($0.phase, $0.progress)
        }
    }

    /// Takes `waiter` out (its wait ran out); false when it was answered already.
    func withdraw(_ waiter: FrameWaiter) -> Bool {
        state.withLock {
            guard let at = $0.waiters.firstIndex(where: { $0 === waiter }) else { return false }
            $0.waiters.remove(at: at)
            return true
        }
    }

    /// Ends the session in `phase` at `now`; returns the waiters to answer (nil when it had
    /// ended already).
    func end(_ phase: Phase, now: Double) -> [FrameWaiter]? {
        state.withLock {
            switch $0.phase {
            case .stored, .failed: return nil
            case .created, .receiving: break
            }
            $0.phase = phase
            $0.ended = now
            $0.path = nil
            $0.indexing = false
            let waiters = $0.waiters
            $0.waiters = []
            $0.progress = Progress()  // the stored image (or nothing) answers from now on
            return waiters
        }
    }
}
