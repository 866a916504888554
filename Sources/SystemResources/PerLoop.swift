import Synchronization

/// One value per event loop, each behind its own lock. A loop touches only its own value, so
/// loops never wait for one another nor share a cache line on the hot path (the values are
/// padded apart, ``CacheLinePadding``); what needs all the values (a scrape, the access-log
/// writer) takes each lock in turn, briefly.
///
/// Its look-ups are inlinable: called from other modules on every request (the access log, the
/// request metrics, the record cache), an unspecialized generic call through value witnesses
/// cost about 1,500 instructions each.
public final class PerLoop<Value: Sendable>: Sendable {
    /// One loop's value. The slots are made one after another, so the allocator puts them side
    /// by side: padded, a loop's lock and value do not share a cache line with another loop's.
    @usableFromInline
    final class Slot: Sendable {
        private let before = CacheLinePadding()
        @usableFromInline let value: Mutex<Value>
        private let after = CacheLinePadding()
        init(_ value: sending Value) { self.value = Mutex(value) }
    }

    @usableFromInline let slots: [Slot]

    /// `count` values (at least one), each made by `make`.
    public init(count: Int, _ make: () -> Value) {
        slots = (0..<max(1, count)).map { _ in Slot(make()) }
    }

    /// The number of values.
    public var count: Int { slots.count }

    /// Runs `body` on the value of `loop` (taken modulo the count) under its lock.
    @inlinable
    public func withLock<Result: Sendable>(_ loop: Int, _ body: (inout Value) -> Result) -> Result {
        // The slot is lent, not retained: `slots` is a constant of this object, which the caller
        // holds, so the slot outlives the call (a retain and a release on every request's three
        // per-loop look-ups otherwise).
        let slot = slots.withUnsafeBufferPointer { Unmanaged.passUnretained($0[loop % $0.count]) }
        return slot._withUnsafeGuaranteedRef { $0.value.withLock { value in body(&value) } }
    }

    /// Runs `body` on every value in turn, each under its lock.
    @inlinable
    public func withEachLock(_ body: (inout Value) -> Void) {
        for slot in slots { slot.value.withLock { body(&$0) } }
    }
}
