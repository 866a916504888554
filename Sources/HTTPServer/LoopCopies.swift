import Synchronization

/// Prepared responses that several event loops hand out, each loop handing out copies of its
/// own (``HTTPPreparedResponse/replica()``), made by that loop the first time it needs one.
///
/// Why: answering with a prepared response retains it, and a retain writes the object's
/// reference count. One object handed out by two loops has that line move between their cores
/// on every response — in a profile at 8 connections most of `swift_retain`'s time was that
/// line's load. A copy made on the loop's own thread also comes from that thread's heap, away
/// from what other threads write. The first answer of each loop allocates its copy; later ones
/// allocate nothing.
public struct LoopCopies: ~Copyable, @unchecked Sendable {
    // (Unchecked: `slots` is only reached through atomics.)
    private let originals: [HTTPPreparedResponse]
    /// Per loop and original: an `Unmanaged` copy's bits (retained once, released in `deinit`),
    /// 0 until made.
    private let slots: UnsafeMutablePointer<Atomic<UInt>>
    private let loops: Int

    /// Copies of `originals` for `loops` loops (at least one).
    public init(_ originals: [HTTPPreparedResponse], loops: Int) {
        self.originals = originals
        self.loops = max(1, loops)
        let count = self.loops * originals.count
        slots = .allocate(capacity: count)
        for i in 0..<count { (slots + i).initialize(to: Atomic(0)) }
    }

    /// Original `index`, shared: for a thread that is not an event loop (rare answers).
    public func original(_ index: Int) -> HTTPPreparedResponse { originals[index] }

    /// Loop `loop`'s copy of original `index` (made now if it is the first), one reference
    /// handed out.
    @inline(__always)
    public func response(_ index: Int, loop: Int) -> HTTPPreparedResponse {
        let slot = (loop % loops) * originals.count + index
        let bits = slots[slot].load(ordering: .acquiring)
        guard bits != 0 else { return makeCopy(slot: slot, of: index) }
        return Self.copy(bits).takeUnretainedValue()
    }

    /// The copy whose bits a slot holds (never 0).
    @inline(__always)
    private static func copy(_ bits: UInt) -> Unmanaged<HTTPPreparedResponse> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    }

    @inline(never)
    private func makeCopy(slot: Int, of index: Int) -> HTTPPreparedResponse {
        let copy = Unmanaged.passRetained(originals[index].replica())
        let bits = UInt(bitPattern: copy.toOpaque())
        let (stored, found) = slots[slot].compareExchange(
            expected: 0, desired: bits, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        guard !stored else { return copy.takeUnretainedValue() }
        // Another thread made this loop's copy first (only a thread answering as `loop` does).
        copy.release()
        return Self.copy(found).takeUnretainedValue()
    }

    /// The heap bytes these copies take once every loop has made its own, besides the
    /// originals: the slots and every copy.
    public var copyBytes: Int {
        HTTPPreparedResponse.allocatedBytes(loops * originals.count * MemoryLayout<UInt>.stride)
            + loops * originals.reduce(0) { $0 + $1.replicaBytes }
    }

    deinit {
        for i in 0..<loops * originals.count {
            let bits = slots[i].load(ordering: .acquiring)
            if bits != 0 { Self.copy(bits).release() }
        }
        slots.deinitialize(count: loops * originals.count)
        slots.deallocate()
    }
}
