import Dispatch
import Glibc  // pthread
import Synchronization
import SystemResources

/// Background threads decoding a run of frames while the caller composites them in order.
/// Frames' data decode independently (only compositing needs the previous canvas), so up to
/// ``workerCount`` threads take the next frame not yet taken; results are handed over in order
/// and at most ``window`` frames are decoded ahead of the consumer. Decoding stops after the first
/// frame that fails, or when cancelled.
final class DecodeAhead: @unchecked Sendable {
    private static let window = 8
    /// One thread per core, at most 4. On 2 cores, the last frame from a cold start took
    /// 0.10 s instead of 0.15 s with one decoding thread for `large.gif` (300 partial 1280×720
    /// frames, giflib's LZW ≈ 65% of the work), 0.13 instead of 0.19 s for `large-lossy.webp`
    /// and 0.18 instead of 0.32 s for `large.apng`.
    private static let workerCount = min(4, CPULimit.usableCores)

    private struct Shared {
        var slots: [Result<FramePatch, any Error>?]
        var nextToClaim = 0
        var stopAfter = Int.max
        var cancelled = false
    }

    private let frames: [FrameDescriptor]
    private let first: Int
    private let count: Int
    private let shared: Mutex<Shared>
    /// Signalled once per slot when its frame's result is stored.
    private let slotReady: [DispatchSemaphore]
    /// Counts the frames that may still be claimed before the consumer takes one. Created at 0
    /// and signalled up to `window`: a semaphore may only be released with a value at least its
    /// initial one, and frames decoded but never taken leave it lower.
    private let room = DispatchSemaphore(value: 0)
    private var taken = 0

    init(decoder: any FrameDecoder, frames: [FrameDescriptor], range: ClosedRange<Int>) {
        self.frames = frames
        self.first = range.lowerBound
        self.count = range.count
        self.shared = Mutex(Shared(slots: Array(repeating: nil, count: Self.window)))
        self.slotReady = (0..<Self.window).map { _ in DispatchSemaphore(value: 0) }
        for _ in 0..<Self.window { room.signal() }
        for _ in 0..<min(Self.workerCount, count) {
            // Threads of their own: Dispatch's pool holds about one thread per core, and the
            // caller compositing on one of them would leave a second worker waiting for a thread.
            DetachedThread.start { [self] in work(decoder) }
        }
    }

    private func work(_ decoder: any FrameDecoder) {
        while true {
            room.wait()
            let claimed: Int? = shared.withLock { state in
                guard !state.cancelled, state.nextToClaim < count, state.nextToClaim <= state.stopAfter else { return nil }
                state.nextToClaim += 1
                return state.nextToClaim - 1
            }
            guard let offset = claimed else {
                room.signal()  // let the next worker see the end too
                return
            }
            let result = Result<FramePatch, any Error> { try decoder.decode(frames[first + offset]) }
            shared.withLock { state in
                state.slots[offset % Self.window] = result
                if case .failure = result { state.stopAfter = min(state.stopAfter, offset) }
            }
            slotReady[offset % Self.window].signal()
        }
    }

    /// The next frame's result, in order (blocks until it is decoded).
    func next() -> Result<FramePatch, any Error> {
        let slot = taken % Self.window
        slotReady[slot].wait()
        taken += 1
        let result = shared.withLock { state -> Result<FramePatch, any Error> in
            defer { state.slots[slot] = nil }  // drop the patch now
            return state.slots[slot] ?? .failure(DecodeAheadTaken())
        }
        room.signal()
        return result
    }

    func cancel() {
        shared.withLock { $0.cancelled = true }
        room.signal()
    }
}

private struct DecodeAheadTaken: Error {}
