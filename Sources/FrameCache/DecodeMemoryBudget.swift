import Dispatch
import Synchronization
import SystemResources

/// The decode-memory budget (`limits.maxDecodeBytes`): what decoding may hold at once besides the
/// frame cache — every render and encode of the cache's decode threads, every upload's
/// verification — whatever the number of threads or cores.
///
/// Each piece of work reserves what it needs (``AnimatedImage/decodeMemory``) before it allocates
/// and gives it back when done; when the budget cannot hold a reservation, the work waits, first
/// come first served (a large reservation is not starved by a stream of small ones). Work that
/// could never fit (more than the whole budget) is refused at once, as is work beyond
/// ``maxWaiting`` waiting reservations: the caller answers 422 or 429.
///
/// ```swift
/// let reservation = try budget.reserve(image.decodeMemory.verificationBytes)
/// defer { reservation.release() }
/// let verified = try image.verifyingFrames()
/// ```
public final class DecodeMemoryBudget: Sendable {
    /// Why a reservation was not made.
    public enum Refusal: Error, Sendable, Equatable {
        /// More than the whole budget: it could never be made.
        case tooLarge(needed: Int, capacity: Int)
        /// ``maxWaiting`` reservations already wait.
        case queueFull
        /// The budget was closed (shutdown) while waiting.
        case closed
    }

    /// The budget's state and history, for `/stats` and `/metrics`.
    public struct Stats: Sendable, Equatable, Codable {
        public var capacityBytes: Int
        /// Reserved now.
        public var usedBytes: Int
        /// The most ever reserved at once.
        public var peakBytes: Int
        /// Reservations waiting now.
        public var waiting: Int
        /// Reservations made, and how many of them had to wait.
        public var reservations: Int
        public var waits: Int
        /// Refused because too many waited, or because they exceeded the budget.
        public var refusedQueueFull: Int
        public var refusedTooLarge: Int
    }

    /// A reservation that waits: its thread sleeps on `wake`, signalled exactly once, after the
    /// reservation was either made for it (its ticket is in `State.granted`) or refused by
    /// ``close()``. A signal given before its thread sleeps is kept by the semaphore, so no
    /// wake-up is lost.
    private struct Waiter: Sendable {
        var ticket: UInt64
        var bytes: Int
        var wake: DispatchSemaphore
    }

    private struct State {
        var used = 0
        var peak = 0
        /// The waiting reservations, in arrival order.
        var queue: [Waiter] = []
        /// Tickets of waiters whose reservation was made, until their thread picks it up.
        var granted: Set<UInt64> = []
        var nextTicket: UInt64 = 0
        var reservations = 0
        var waits = 0
        var refusedQueueFull = 0
        var refusedTooLarge = 0
        var closed = false

        mutating func grant(_ bytes: Int) {
            used += bytes
            peak = max(peak, used)
            reservations += 1
        }

        /// Makes the reservations at the head of the queue that fit now, first come first served
        /// (one that does not fit keeps those behind it waiting); returns the threads to wake.
        mutating func admitWaiters() -> [DispatchSemaphore] {
            var woken: [DispatchSemaphore] = []
            while let head = queue.first, used + head.bytes <= capacityBytes {
                queue.removeFirst()
                grant(head.bytes)
                granted.insert(head.ticket)
                woken.append(head.wake)
            }
            return woken
        }

        let capacityBytes: Int
        init(capacityBytes: Int) { self.capacityBytes = capacityBytes }
    }

    public let capacityBytes: Int
    public let maxWaiting: Int
    private let state: Mutex<State>

    /// - Parameters:
    ///   - capacityBytes: the budget.
    ///   - maxWaiting: how many reservations may wait at once (the cache's `maxWaitingRequests`).
    public init(capacityBytes: Int, maxWaiting: Int = 4096) {
        self.capacityBytes = max(0, capacityBytes)
        self.maxWaiting = max(0, maxWaiting)
        self.state = Mutex(State(capacityBytes: self.capacityBytes))
    }

    /// Reserves `bytes`, waiting while the budget cannot hold them (behind reservations that came
    /// first). Give them back with ``DecodeReservation/release()`` (or by dropping the reservation).
    public func reserve(_ bytes: Int) throws(Refusal) -> DecodeReservation {
        let bytes = max(0, bytes)
        let (capacityBytes, maxWaiting) = (self.capacityBytes, self.maxWaiting)
        let waiter = try state.withLock { state throws(Refusal) -> Waiter? in
            guard bytes <= capacityBytes else {
                state.refusedTooLarge += 1
                throw .tooLarge(needed: bytes, capacity: capacityBytes)
            }
            if state.closed { throw .closed }
            if state.queue.isEmpty && state.used + bytes <= capacityBytes {
                state.grant(bytes)
                return nil
            }
            guard state.queue.count < maxWaiting else {
                state.refusedQueueFull += 1
                throw .queueFull
            }
            let waiter = Waiter(ticket: state.nextTicket, bytes: bytes, wake: DispatchSemaphore(value: 0))
            state.nextTicket += 1
            state.queue.append(waiter)
            state.waits += 1
            return waiter
        }
        if let waiter {
            waiter.wake.wait()
            let made = state.withLock { $0.granted.remove(waiter.ticket) != nil }
            guard made else { throw .closed }
        }
        return DecodeReservation(budget: self, bytes: bytes)
    }

    /// Wakes every waiting reservation with ``Refusal/closed``; later ones are refused too.
    public func close() {
        let woken = state.withLock { state -> [DispatchSemaphore] in
            state.closed = true
            defer { state.queue.removeAll() }
            return state.queue.map(\.wake)
        }
        for wake in woken { wake.signal() }
    }

    public func stats() -> Stats {
        let capacityBytes = self.capacityBytes
        return state.withLock { state in
            Stats(
                capacityBytes: capacityBytes, usedBytes: state.used, peakBytes: state.peak,
                waiting: state.queue.count, reservations: state.reservations, waits: state.waits,
                refusedQueueFull: state.refusedQueueFull, refusedTooLarge: state.refusedTooLarge)
        }
    }

    fileprivate func giveBack(_ bytes: Int) {
        let woken = state.withLock { state -> [DispatchSemaphore] in
            state.used -= bytes
            return state.admitWaiters()
        }
        for wake in woken { wake.signal() }
        // Not counted towards handing memory back (``ReleasedMemory``): a reservation is a bound,
        // not what went back to the heap. The work's large buffers are mappings of their own,
        // unmapped as they are freed; its small ones stay in the heap for the next piece of work.
    }
}

/// Bytes of a ``DecodeMemoryBudget`` held by one piece of work; given back once, by
/// ``release()`` or when the last reference goes.
public final class DecodeReservation: Sendable {
    public let bytes: Int
    private let budget: DecodeMemoryBudget
    private let released = Mutex(false)

    fileprivate init(budget: DecodeMemoryBudget, bytes: Int) {
        self.budget = budget
        self.bytes = bytes
    }

    deinit { release() }

    public func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        if first { budget.giveBack(bytes) }
    }
}
