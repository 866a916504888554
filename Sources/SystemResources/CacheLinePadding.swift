/// Unused bytes that keep a thread's hot fields off the cache lines of its neighbours on the heap.
///
/// Objects one thread writes on every request — an event loop's lock and counters — are often
/// made one after another (one per loop, at start-up), so the allocator places them side by
/// side, and two loops' hot fields can share a 64-byte line: each write by one loop then takes
/// the line from the other's core. Put one of these before and one after such fields. It is 128
/// bytes, as cores may fetch lines in pairs.
public struct CacheLinePadding: Sendable {
    private let bytes = InlineArray<16, UInt64>(repeating: 0)

    public init() {}
}
