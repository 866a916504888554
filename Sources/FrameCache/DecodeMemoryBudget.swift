import Foundation
import SystemResources

/// The decode-memory budget (`limits.maxDecodeBytes`): what decoding may hold at once besides the
/// frame cache — every render and encode of the cache's decode threads, every upload's
/// verification — whatever the number of threads or cores.
///
/// Each piece of work reserves what it needs (``AnimatedImage/decodeMemory``) before it allocates
/// and gives it back when done; when the budget cannot hold a reservation, the work waits, first
/// come first served (a large reservation is not starved by a stream of small ones). Work that
/// could never fit (more than the whole budget) is refused at once, as is work beyond
/// ``maxWaiting`` waiting reservations: the caller answers 422 or 429. What is given back is
/// counted towards handing freed memory to the kernel (``ReleasedMemory``), as evictions are.
///
/// ```swift
/// let reservation = try budget.reserve(image.decodeMemory.verificationBytes)
/// defer { reservation.release() }
/// let verified = try image.verifyingFrames()
/// ```
public final class DecodeMemoryBudget: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`.

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

    public let capacityBytes: Int
    public let maxWaiting: Int
    private let condition = NSCondition()
    private var used = 0
    private var peak = 0
    /// Tickets of the waiting reservations, in arrival order.
    private var queue: [UInt64] = []
    private var nextTicket: UInt64 = 0
    private var reservations = 0
    private var waits = 0
    private var refusedQueueFull = 0
    private var refusedTooLarge = 0
    private var closed = false

    /// - Parameters:
    ///   - capacityBytes: the budget.
    ///   - maxWaiting: how many reservations may wait at once (the cache's `maxWaitingRequests`).
    public init(capacityBytes: Int, maxWaiting: Int = 4096) {
        self.capacityBytes = max(0, capacityBytes)
        self.maxWaiting = max(0, maxWaiting)
    }

    /// Reserves `bytes`, waiting while the budget cannot hold them (behind reservations that came
    /// first). Give them back with ``DecodeReservation/release()`` (or by dropping the reservation).
    public func reserve(_ bytes: Int) throws(Refusal) -> DecodeReservation {
        let bytes = max(0, bytes)
        condition.lock()
        defer { condition.unlock() }
        guard bytes <= capacityBytes else {
            refusedTooLarge += 1
            throw .tooLarge(needed: bytes, capacity: capacityBytes)
        }
        if closed { throw .closed }
        if queue.isEmpty && used + bytes <= capacityBytes {
            return grant(bytes)
        }
        guard queue.count < maxWaiting else {
            refusedQueueFull += 1
            throw .queueFull
        }
        let ticket = nextTicket
        nextTicket += 1
        queue.append(ticket)
        waits += 1
        while !closed && !(queue.first == ticket && used + bytes <= capacityBytes) {
            condition.wait()
        }
        queue.removeAll { $0 == ticket }
        if closed {
            condition.broadcast()
            throw .closed
        }
        condition.broadcast()  // the next in line may fit too
        return grant(bytes)
    }

    /// Wakes every waiting reservation with ``Refusal/closed``; later ones are refused too.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    public func stats() -> Stats {
        condition.lock()
        defer { condition.unlock() }
        return Stats(capacityBytes: capacityBytes, usedBytes: used, peakBytes: peak, waiting: queue.count,
                     reservations: reservations, waits: waits, refusedQueueFull: refusedQueueFull,
                     refusedTooLarge: refusedTooLarge)
    }

    /// Under the lock.
    private func grant(_ bytes: Int) -> DecodeReservation {
        used += bytes
        peak = max(peak, used)
        reservations += 1
        return DecodeReservation(budget: self, bytes: bytes)
    }

    fileprivate func giveBack(_ bytes: Int) {
        condition.lock()
        used -= bytes
        condition.broadcast()
        condition.unlock()
        // What the work allocated is free now: counted on the rule evictions follow.
        ReleasedMemory.note(bytes)
    }
}

/// Bytes of a ``DecodeMemoryBudget`` held by one piece of work; given back once, by
/// ``release()`` or when the last reference goes.
public final class DecodeReservation: @unchecked Sendable {
    // @unchecked: `released` is only touched under `lock`.
    public let bytes: Int
    private let budget: DecodeMemoryBudget
    private let lock = NSLock()
    private var released = false

    fileprivate init(budget: DecodeMemoryBudget, bytes: Int) {
        self.budget = budget
        self.bytes = bytes
    }

    deinit { release() }

    public func release() {
        lock.lock()
        let first = !released
        released = true
        lock.unlock()
        if first { budget.giveBack(bytes) }
    }
}
